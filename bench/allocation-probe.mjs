/**
 * Loaded into a benchmark's server (`node --import ./bench/allocation-probe.mjs`, cluster workers
 * inherit it) where BENCH_ALLOCATION_DIR is set: on SIGUSR2 the process writes to
 * `<dir>/<pid>` a reading number and the bytes its V8 heap has allocated so far (the heap in use
 * now plus what every collection since start freed, from V8's GC profiler). The difference of two
 * readings is what the process allocated between them, garbage included; Buffers' memory outside
 * the heap is not counted. bench/compare.mjs divides it by the requests answered.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GCProfiler, getHeapStatistics } from 'node:v8';

const dir = process.env.BENCH_ALLOCATION_DIR;
if (dir) {
  const profiler = new GCProfiler();
  profiler.start();
  let freed = 0;
  let reading = 0;
  process.on('SIGUSR2', () => {
    // Restarted at once: each stop answers the collections since the last start, none counted twice.
    const { statistics } = profiler.stop();
    profiler.start();
    for (const { beforeGC, afterGC } of statistics) freed += beforeGC.heapStatistics.usedHeapSize - afterGC.heapStatistics.usedHeapSize;
    // Written aside and renamed, so a reader never finds it half written.
    const file = join(dir, String(process.pid));
    writeFileSync(`${file}.new`, `${++reading} ${freed + getHeapStatistics().used_heap_size}`);
    renameSync(`${file}.new`, file);
  });
}
