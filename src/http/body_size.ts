/** Caps request bodies so a large upload cannot tie up memory: 413 past the limit. */
import { bodyLimit } from "hono/body-limit";
import { ApiError } from "../errors.ts";

/** 413 for a body over `maxBytes`, whether it declares its length or streams. */
export function bodySize(maxBytes: number) {
  return bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new ApiError(413, "PAYLOAD_TOO_LARGE", `Request body is larger than ${maxBytes} bytes`);
    },
  });
}
