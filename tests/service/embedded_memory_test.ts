/**
 * The memory of a first start on the embedded database, run with the start
 * task's command on an empty DATA_DIR: its peak RSS (the kernel's VmHWM) stays
 * far below what PGlite's initdb took it to (816-1,025 MiB); 207-293 MiB here
 * (tests/bench/embedded_bench.ts measures it with the idle figures).
 */
import assert from "node:assert/strict";
import { startService } from "../_helpers/process.ts";
import { statusKb } from "../_helpers/proc_status.ts";

const PEAK_BOUND_MIB = 400;

Deno.test({
  name: `a first start on the embedded database peaks under ${PEAK_BOUND_MIB} MiB RSS`,
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const dataDir = await Deno.makeTempDir({ prefix: "inbox-memory-" });
    try {
      const service = await startService({ DATA_DIR: dataDir });
      const peak = statusKb(service.pid, "VmHWM") / 1024;
      assert.equal(await service.stop(), 0);
      assert.ok(peak < PEAK_BOUND_MIB, `peak RSS ${Math.round(peak)} MiB`);
    } finally {
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});
