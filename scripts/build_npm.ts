/**
 * `deno task build:npm [--out DIR] [--pack]`: the typed client and the
 * receiver-side verification (src/client/) as an npm package for Node 20+, ES
 * modules with .d.ts types, written to DIR (default dist/npm), ready for
 * `npm publish`; `--pack` also makes the tarball (`npm pack`) beside DIR
 * (dist/ by default), which git ignores, as it does DIR.
 *
 * The sources are copied with their imports rewritten for Node
 * (`npm:openapi-fetch@0.17.0` -> `openapi-fetch`, which becomes a dependency
 * at that exact version; `./sse.ts` -> `./sse.js`; the generated API types ->
 * `./api.js`), then compiled by the TypeScript compiler (npm `typescript`,
 * locked in deno.dev.lock) against the ES2022 + DOM library that Node 20
 * provides, so that an API Node 20 lacks fails the build rather than the user.
 */
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";

const ROOT = new URL("../", import.meta.url);
const TYPESCRIPT = "npm:typescript@5.9.3";
const PACKAGE_NAME = "@inbox-service/client";
/** What the package holds: the client folder, and nothing it does not import. */
const SOURCES = ["src/client/mod.ts", "src/client/sse.ts", "src/client/verify.ts"];
const API_TYPES = "generated/api.d.ts";

/** A source file's text with its module specifiers made Node's; collects the npm dependencies. */
export function rewriteImports(file: string, text: string, dependencies: Map<string, string>): string {
  return text.replace(/(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(["'])([^"']+)\2/g, (_all, lead, quote, spec) => {
    const npm = /^npm:(@?[^@/]+(?:\/[^@/]+)?)@([^/]+)(\/.*)?$/.exec(spec);
    let out: string;
    if (npm) {
      const [, name, version, subpath] = npm as unknown as [string, string, string, string | undefined];
      const known = dependencies.get(name);
      if (known !== undefined && known !== version) throw new Error(`${file}: ${name} at ${version} and ${known}`);
      dependencies.set(name, version);
      out = name + (subpath ?? "");
    } else if (spec.startsWith("node:")) {
      out = spec;
    } else if (spec === `../../${API_TYPES}`) {
      out = "./api.js";
    } else if (/^\.\/[\w-]+\.ts$/.test(spec)) {
      out = spec.replace(/\.ts$/, ".js");
    } else {
      throw new Error(`${file}: the npm package cannot hold the import "${spec}"`);
    }
    return `${lead}${quote}${out}${quote}`;
  });
}

async function run(args: string[], cwd: URL): Promise<void> {
  const out = await new Deno.Command(Deno.execPath(), { args, cwd, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) {
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    throw new Error(`deno ${args.join(" ")} failed:\n${text}`);
  }
}

/** Builds the package into `outDir`; returns its package.json. */
export async function buildNpmPackage(outDir: string): Promise<Record<string, unknown>> {
  const denoJson = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const stage = await Deno.makeTempDir({ prefix: "build_npm_" });
  try {
    const dependencies = new Map<string, string>();
    for (const source of SOURCES) {
      const text = await Deno.readTextFile(new URL(source, ROOT));
      await Deno.writeTextFile(`${stage}/${source.split("/").at(-1)}`, rewriteImports(source, text, dependencies));
    }
    await Deno.copyFile(new URL(API_TYPES, ROOT), `${stage}/api.d.ts`);
    await Deno.writeTextFile(`${stage}/package.json`, JSON.stringify({ type: "module" }));
    // The compiler resolves the dependencies' types as Node would, from node_modules.
    for (const name of dependencies.keys()) {
      const target = new URL(`node_modules/${name}`, ROOT).pathname;
      await Deno.stat(target).catch(() => {
        throw new Error(`${target} is missing: run deno install`);
      });
      await Deno.mkdir(`${stage}/node_modules/${name.split("/").slice(0, -1).join("/")}`, { recursive: true });
      await Deno.symlink(target, `${stage}/node_modules/${name}`);
    }
    await Deno.remove(outDir, { recursive: true }).catch(() => {});
    await Deno.mkdir(outDir, { recursive: true });
    await Deno.writeTextFile(
      `${stage}/tsconfig.json`,
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          lib: ["ES2022", "DOM", "DOM.Iterable", "DOM.AsyncIterable"],
          module: "NodeNext",
          moduleResolution: "NodeNext",
          types: [],
          strict: true,
          noUncheckedIndexedAccess: true,
          noImplicitReturns: true,
          declaration: true,
          skipLibCheck: true,
          rootDir: stage,
          outDir,
        },
        files: SOURCES.map((s) => `${stage}/${s.split("/").at(-1)}`),
      }),
    );
    await run(["run", "-A", "--lock=deno.dev.lock", `${TYPESCRIPT}/tsc`, "-p", `${stage}/tsconfig.json`], ROOT);
    await Deno.copyFile(`${stage}/api.d.ts`, `${outDir}/api.d.ts`);

    const pkg = {
      name: PACKAGE_NAME,
      version: denoJson.version,
      description: "Typed client of the Inbox Service API and webhook signature verification for receivers",
      type: "module",
      main: "./mod.js",
      types: "./mod.d.ts",
      exports: { ".": { types: "./mod.d.ts", default: "./mod.js" } },
      files: ["*.js", "*.d.ts", "README.md"],
      sideEffects: false,
      engines: { node: ">=20" },
      dependencies: Object.fromEntries(dependencies),
    };
    await Deno.writeTextFile(`${outDir}/package.json`, JSON.stringify(pkg, null, 2) + "\n");
    await Deno.writeTextFile(
      `${outDir}/README.md`,
      `# ${PACKAGE_NAME}\n\nThe typed client of the Inbox Service API (built on openapi-fetch) and the webhook ` +
        "signature checks for receivers, for Node 20+ (ES modules, with types).\n\n" +
        "```js\nimport { createClient, verifyWebhookSignature, parseWebhookEvent } from " +
        `"${PACKAGE_NAME}";\n\n` +
        'const client = createClient({ baseUrl: "http://localhost:8000", apiKey: process.env.INBOX_API_KEY });\n' +
        "const { data: inbox } = await client.inboxes.create({ ttlSeconds: 600 });\n```\n\n" +
        "Built from the service's repository with `deno task build:npm`; see its README.\n",
    );
    return pkg;
  } finally {
    await Deno.remove(stage, { recursive: true });
  }
}

/** Packs the package in `packageDir` with npm into its parent folder; returns the tarball's path. */
export async function packNpmPackage(packageDir: string): Promise<string> {
  const destination = dirname(packageDir);
  const out = await new Deno.Command("npm", {
    args: ["pack", packageDir, "--json", "--pack-destination", destination],
    cwd: destination,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`npm pack failed:\n${new TextDecoder().decode(out.stderr)}`);
  const [packed] = JSON.parse(new TextDecoder().decode(out.stdout)) as { filename: string }[];
  return join(destination, packed!.filename);
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Deno.args, options: { out: { type: "string" }, pack: { type: "boolean" } } });
  const out = resolve(values.out ?? new URL("dist/npm", ROOT).pathname);
  const pkg = await buildNpmPackage(out);
  console.log(`${pkg.name}@${pkg.version} built in ${out}`);
  if (values.pack) console.log(`Packed into ${await packNpmPackage(out)}`);
  else {console.log(
      `deno task build:npm --pack makes the tarball beside it (npm pack ${out} --pack-destination ${dirname(out)})`,
    );}
}
