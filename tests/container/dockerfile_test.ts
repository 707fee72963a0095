/**
 * Static checks of the container files (no Docker engine needed): the
 * Dockerfile's base image, user, ports, health check, command and layer order,
 * that compose.yaml runs the same image settings on PostgreSQL, and that the
 * SQL files a start applies reach the image.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { loadLiveSql, loadMigrations } from "../../src/db/migrate.ts";

const ROOT = new URL("../../", import.meta.url);
const read = (name: string) => Deno.readTextFile(new URL(name, ROOT));

interface Instruction {
  op: string;
  args: string;
  line: number;
}

/** Dockerfile instructions, with comments dropped and `\` continuations joined. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = "";
  let start = 0;
  text.split("\n").forEach((raw, index) => {
    const line = raw.trim();
    if (pending === "" && (line === "" || line.startsWith("#"))) return;
    if (pending === "") start = index + 1;
    if (line.endsWith("\\")) {
      pending += line.slice(0, -1) + " ";
      return;
    }
    const full = (pending + line).trim();
    pending = "";
    const match = /^(\S+)\s*(.*)$/.exec(full)!;
    out.push({ op: match[1]!.toUpperCase(), args: match[2]!, line: start });
  });
  return out;
}

/** The arguments of an exec-form (JSON array) instruction. */
function execForm(args: string): string[] {
  const value = JSON.parse(args);
  assert.ok(Array.isArray(value) && value.every((v) => typeof v === "string"), `exec form expected: ${args}`);
  return value;
}

const dockerfile = instructions(await read("Dockerfile"));
const denoJson = JSON.parse(await read("deno.json"));
const compose = parse(await read("compose.yaml"));
const dockerignore = (await read(".dockerignore")).split("\n").map((l) => l.trim()).filter((l) =>
  l && !l.startsWith("#")
);

const all = (op: string) => dockerfile.filter((i) => i.op === op);
const one = (op: string) => {
  const found = all(op);
  assert.equal(found.length, 1, `exactly one ${op}`);
  return found[0]!;
};
const indexOf = (predicate: (i: Instruction) => boolean) => dockerfile.findIndex(predicate);

Deno.test("Dockerfile: FROM a pinned denoland/deno 2.x tag", () => {
  const from = one("FROM").args;
  const match = /^denoland\/deno:(?:(?:debian|bin|distroless|alpine|ubuntu)-)?(2\.\d+\.\d+)$/.exec(from);
  assert.ok(match, `FROM ${from} is not a pinned denoland/deno:2.x.y tag`);
  assert.equal(dockerfile[0]!.op, "FROM");
});

Deno.test("Dockerfile: runs as a non-root user before CMD", () => {
  const users = all("USER");
  assert.ok(users.length > 0, "a USER instruction");
  const last = users.at(-1)!;
  assert.ok(!/^(root|0)(:|$)/.test(last.args), `USER ${last.args} is root`);
  assert.ok(last.line < one("CMD").line, "USER comes before CMD");
});

Deno.test("Dockerfile: EXPOSE 8000 (HTTP) and 2525 (SMTP)", () => {
  const ports = all("EXPOSE").flatMap((i) => i.args.split(/\s+/)).map((p) => p.replace(/\/tcp$/, ""));
  assert.ok(ports.includes("8000"), `EXPOSE ${ports}`);
  assert.ok(ports.includes("2525"), `EXPOSE ${ports}`);
});

Deno.test("Dockerfile: HEALTHCHECK probes /healthz with Deno (no curl in the image)", () => {
  const check = one("HEALTHCHECK").args;
  assert.match(check, /CMD/);
  assert.match(check, /\/healthz/);
  assert.match(check, /\bdeno\b.*\beval\b/);
  assert.doesNotMatch(check, /\b(curl|wget)\b/);
  const cmd = execForm(check.slice(check.indexOf("[")));
  assert.equal(cmd[0], "deno", "the health check does not go through the ENTRYPOINT");
  assert.match(cmd.at(-1)!, /Deno\.exit\(r\.ok \? 0 : 1\)/);
});

Deno.test("Dockerfile: CMD runs the `start` task of deno.json through the deno ENTRYPOINT", () => {
  assert.deepEqual(execForm(one("ENTRYPOINT").args), ["deno"]);
  assert.deepEqual(execForm(one("CMD").args), ["task", "start"]);
  assert.equal(typeof denoJson.tasks.start, "string");
  assert.match(denoJson.tasks.start, /src\/main\.ts/);
  assert.equal(dockerfile.at(-1)!.op, "CMD");
});

Deno.test("Dockerfile: dependencies are installed (frozen) before the source is copied", () => {
  const copyManifest = indexOf((i) =>
    i.op === "COPY" && /\bdeno\.json\b/.test(i.args) && /\bdeno\.lock\b/.test(i.args)
  );
  const install = indexOf((i) => i.op === "RUN" && /\bdeno install\b.*--frozen/.test(i.args));
  const copySource = indexOf((i) => i.op === "COPY" && /(^|\s)\.\s+\.\/?$/.test(i.args.replace(/--\S+\s+/g, "")));
  const cache = indexOf((i) => i.op === "RUN" && /\bdeno cache\b.*src\/main\.ts/.test(i.args));
  assert.ok(copyManifest >= 0, "COPY deno.json deno.lock");
  assert.ok(install > copyManifest, "RUN deno install --frozen after copying the manifest");
  assert.ok(copySource > install, "the source is copied after the install layer");
  assert.ok(cache > copySource, "deno cache src/main.ts after the source");
  const user = indexOf((i) => i.op === "USER");
  assert.ok(user < install, "dependencies are installed as the runtime user, so it owns its cache");
  // deno.lock is the runtime lockfile (tests/packaging/runtime_deps_test.ts); the development
  // tools' lockfile never takes part in the image.
  assert.ok(!dockerfile.some((i) => /deno\.dev\.lock|--lock\b/.test(i.args)), "the image installs from deno.lock");
});

Deno.test("Dockerfile: DATA_DIR=/data is a volume", () => {
  assert.ok(all("ENV").some((i) => /\bDATA_DIR=\/data\b/.test(i.args)), "ENV DATA_DIR=/data");
  const volume = one("VOLUME").args;
  assert.ok(volume.includes("/data"), `VOLUME ${volume}`);
});

Deno.test(".dockerignore keeps local state and build outputs out of the context", () => {
  const entries = [
    "node_modules",
    "data",
    ".git",
    "tests/e2e/out",
    "deno.dev.lock",
    // `COPY . .` would otherwise take the benchmarks' cache (hundreds of MB) and the npm build.
    "tests/bench/.cache",
    "dist",
    "last-body.json",
    "*.cpuprofile",
  ];
  for (const entry of entries) {
    assert.ok(dockerignore.some((l) => l.replace(/\/$/, "") === entry), `.dockerignore lists ${entry}`);
  }
  for (const needed of ["deno.json", "deno.lock", "src", "generated", "openapi.yaml"]) {
    assert.ok(!dockerignore.some((l) => l.replace(/\/$/, "") === needed), `${needed} must reach the image`);
  }
});

/** Whether a `.dockerignore` pattern (Go's filepath.Match with `**`) leaves `path` or one of its folders out. */
function ignores(pattern: string, path: string): boolean {
  const source = pattern.replace(/^\/|\/$/g, "").split("**").map((part) =>
    part.replace(/[.+^${}()|[\]\\]/g, "\\$&").replaceAll("*", "[^/]*").replaceAll("?", "[^/]")
  ).join(".*");
  const re = new RegExp(`^${source}$`);
  const parts = path.split("/");
  return parts.some((_, i) => re.test(parts.slice(0, i + 1).join("/")));
}

Deno.test(".dockerignore lets every SQL file a start applies reach the image (migrations and live SQL)", async () => {
  const files = [...(await loadMigrations()).map((m) => m.file!), ...(await loadLiveSql()).map((l) => l.file)];
  assert.ok(files.some((f) => f.startsWith("src/deliveries/sql/")), files.join());
  assert.ok(ignores("tests/bench/.cache/", "tests/bench/.cache/x.bin") && ignores("*.cpuprofile", "a.cpuprofile"));
  for (const file of files) {
    assert.ok(!file.startsWith("/"), `${file} is inside the project`);
    for (const pattern of dockerignore) {
      assert.ok(!ignores(pattern, file), `.dockerignore ${pattern} leaves out ${file}`);
    }
  }
});

Deno.test("compose.yaml: the service on the same ports, with DATABASE_URL and ENCRYPTION_KEY, beside postgres:16", () => {
  const services = compose.services as Record<string, Record<string, unknown>>;
  const [name, app] = Object.entries(services).find(([, s]) => s.build !== undefined) ?? [];
  assert.ok(name && app, "a service built from the Dockerfile");
  const ports = (app.ports as string[]).map(String);
  for (const port of ["8000", "2525"]) {
    assert.ok(ports.some((p) => p.endsWith(`:${port}`) || p === port), `${name} publishes container port ${port}`);
  }
  const env = app.environment as Record<string, string>;
  assert.match(env.DATABASE_URL ?? "", /^postgres(ql)?:\/\/.+@postgres:5432\//);
  assert.match(
    env.ENCRYPTION_KEY ?? "",
    /^\$\{ENCRYPTION_KEY(:?\?.+)?\}$/,
    "ENCRYPTION_KEY comes from the environment",
  );
  assert.match(env.ADMIN_TOKEN ?? "", /^\$\{ADMIN_TOKEN/, "ADMIN_TOKEN comes from the environment");
  const pg = services.postgres!;
  assert.ok(pg, "a postgres service");
  assert.equal(pg.image, "postgres:16");
  assert.ok((pg.healthcheck as { test: unknown }).test, "postgres has a health check");
  assert.deepEqual(app.depends_on, { postgres: { condition: "service_healthy" } });
});
