/**
 * The heap's growth between full collections, chosen by what the process is doing. V8 counts the
 * memory outside its heap allocated since the last full collection (every buffer a socket read or
 * a file read made, dead or alive) as if the heap had grown by it: a process moving files at
 * `serve`'s growth factor (50 %, for a JSON API's RSS) starts a full collection after every few
 * MiB moved, each marking the whole heap. While files move, a larger factor is set instead (a
 * fixed one: V8's own shrinks to 1.1x after a quiet spell), and `serve`'s again once none has
 * begun or ended for a second (measured in docs/performance.md, Files).
 */
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
