/**
 * Password hashing with scrypt from node:crypto. The asynchronous form runs on
 * libuv's thread pool, so hashing never blocks the event loop.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { hashingSlots, type HashingWork } from './hashing-slots.js';

const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
// scrypt needs 128 * N * r bytes; leave headroom above Node's 32 MiB default.
const MAX_MEMORY = 64 * 1024 * 1024;

/**
 * One derivation per CPU at a time. Each holds 32 MiB while it runs, and more at once than there
 * are cores only interleaves them (the same hashes a second) while holding more memory and every
 * thread of libuv's pool, which file reads and DNS lookups share. Credential checks keep a share of
 * the slots that hashing for writes cannot take (see hashing-slots.ts), so a flood of password
 * changes cannot starve logins. A check of a known user and the dummy check of an unknown one wait
 * in the same queue, so a login's timing still says nothing.
 */
const derivationSlots = hashingSlots(availableParallelism());

function derive(work: HashingWork, password: string, salt: Buffer, options: ScryptOptions, keyLength: number): Promise<Buffer> {
  return derivationSlots.run(
    work,
    () =>
      new Promise((resolve, reject) => {
        scrypt(password.normalize('NFKC'), salt, keyLength, { ...options, maxmem: MAX_MEMORY }, (error, key) =>
          error ? reject(error) : resolve(key),
        );
      }),
  );
}

async function hashAs(work: HashingWork, password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(work, password, salt, PARAMS, KEY_LENGTH);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** `scrypt$N$r$p$salt$key`, salt and key in base64; hashing for a write (a new or changed password). */
export const hashPassword = (password: string): Promise<string> => hashAs('write', password);

/**
 * Whether `password` matches the stored hash. `work` is `check` for a credential check someone waits
 * on to log in; a check made as part of a write (a current password confirming a change) passes
 * `write`, so it draws on the writes' share.
 */
export async function verifyPassword(password: string, stored: string, work: HashingWork = 'check'): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  // An unusable password (or any that is no scrypt hash) fails as slowly as a wrong one.
  if (scheme !== 'scrypt' || !salt || !key) return verifyAgainstDummy(password);
  const expected = Buffer.from(key, 'base64');
  const actual = await derive(work, password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) }, expected.length);
  return timingSafeEqual(actual, expected);
}

let dummyHash: Promise<string> | undefined;

/** Spend the time a real check would, so a login reveals nothing about which usernames exist. */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hashAs('check', 'restfold-dummy-password');
  await verifyPassword(password, await dummyHash);
  return false;
}
