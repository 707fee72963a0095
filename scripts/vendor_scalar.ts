/**
 * Refreshes `vendor/scalar/standalone.js`, the one file of npm
 * `@scalar/api-reference` the service serves at /docs/scalar.js. The npm
 * package would bring its whole build tree (Vue, CodeMirror, TypeScript: some
 * 300 MB of node_modules) into every install for this single self-contained
 * bundle, so the bundle is vendored and the package is not a dependency.
 *
 * Usage: deno run -A --no-config scripts/vendor_scalar.ts [version]   (needs npm)
 */
const DEFAULT_VERSION = "1.72.1";
const ROOT = new URL("../", import.meta.url);
const BUNDLE = "package/dist/browser/standalone.js";

async function run(cmd: string, args: string[], cwd: string): Promise<string> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout);
}

if (import.meta.main) {
  const version = Deno.args[0] ?? DEFAULT_VERSION;
  const dir = await Deno.makeTempDir({ prefix: "vendor_scalar_" });
  try {
    const packed = JSON.parse(
      await run("npm", ["pack", `@scalar/api-reference@${version}`, "--json", "--pack-destination", dir], dir),
    ) as { filename: string; integrity: string }[];
    const tarball = `${dir}/${packed[0]!.filename}`;
    await run("tar", ["-xzf", tarball, "-C", dir, BUNDLE], dir);
    const target = new URL("vendor/scalar/standalone.js", ROOT);
    await Deno.copyFile(`${dir}/${BUNDLE}`, target);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", await Deno.readFile(target))).toHex();
    console.log(`vendor/scalar/standalone.js <- @scalar/api-reference@${version} (${packed[0]!.integrity})`);
    console.log(`sha256 ${digest}: put the version and this digest in vendor/scalar/README.md`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
