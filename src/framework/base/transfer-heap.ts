/**
 * The heap's growth between full collections, chosen by what the process is doing. Memory outside
 * the heap that sockets and file reads allocate counts towards the next full collection as if the
 * heap had grown by it, so a process moving files at `serve`'s growth factor (chosen for a JSON
 * API's RSS) would mark its whole heap every few buffers' worth of bytes. While files move, a
 * larger fixed factor is set instead (the runtime's own would shrink back after a quiet spell), and
 * `serve`'s again once no transfer has begun or ended for a whole interval (measured in
 * docs/performance.md, Files). */
import { setFlagsFromString } from 'node:v8';

export interface HeapGrowth {
  /** The flag set while no file moves (`serve`'s). */
  readonly idle: string;
  /** The flag set while files move. */
  readonly transferring: string;
}

/** How often the growth is checked: the idle one is set again after a whole interval without a transfer. */
const SETTLE_MS = 1000;

let growth: HeapGrowth | undefined;
let inFlight = 0;
/** Whether a transfer began or ended since the last check: the idle growth waits for a whole quiet interval. */
let movedSinceCheck = false;
let timer: NodeJS.Timeout | undefined;

const done = (): void => undefined;

/** Chooses the growth by transfers from now on (`serve` does, unless the deployer gave node a growth). */
export function growHeapForTransfers(chosen: HeapGrowth): void {
  growth = chosen;
}

function check(): void {
  if (inFlight > 0 || movedSinceCheck) {
    movedSinceCheck = false;
    return;
  }
  clearInterval(timer);
  timer = undefined;
  setFlagsFromString(growth!.idle);
}

/** A file upload or download begins: returns what ends it (once; calling it again does nothing). */
export function fileTransfer(): () => void {
  if (!growth) return done;
  inFlight += 1;
  movedSinceCheck = true;
  if (!timer) {
    setFlagsFromString(growth.transferring);
    timer = setInterval(check, SETTLE_MS).unref();
  }
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    inFlight -= 1;
    movedSinceCheck = true;
  };
}
