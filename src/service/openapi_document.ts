/** The hand-written OpenAPI document, read once at start-up. */
import { parse } from "yaml";

const DOCUMENT_URL = new URL("../../openapi.yaml", import.meta.url);

/** The document as YAML text (served verbatim at /openapi.yaml). */
export const openApiYaml: string = await Deno.readTextFile(DOCUMENT_URL);

/** The document as an object (served at /openapi.json, used by the contract test). */
export const openApiDocument: Record<string, unknown> = parse(openApiYaml);
