/**
 * Password hashing with scrypt from node:crypto. The asynchronous form runs on
 * libuv's thread pool, so hashing never blocks the event loop.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { availableParallelism } from 'node:os';
import pLimit from 'p-limit';

const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
// scrypt needs 128 * N * r bytes; leave headroom above Node's 32 MiB default.
const MAX_MEMORY = 64 * 1024 * 1024;

/**
 * One derivation per CPU at a time. Each holds 32 MiB while it runs, and more at once than there
 * are cores only interleaves them (the same hashes a second) while holding more memory and every
 * thread of libuv's pool, which file reads and DNS lookups share. Hashes and checks (the dummy
 * check of an unknown username too) wait in one queue, so a login's timing still says nothing.
 */
const oneDerivationPerCore = pLimit(availableParallelism());

function derive(password: string, salt: Buffer, options: ScryptOptions, keyLength: number): Promise<Buffer> {
  return oneDerivationPerCore(
    () =>
      new Promise((resolve, reject) => {
        scrypt(password.normalize('NFKC'), salt, keyLength, { ...options, maxmem: MAX_MEMORY }, (error, key) =>
          error ? reject(error) : resolve(key),
        );
      }),
  );
}

/** `scrypt$N$r$p$salt$key`, salt and key in base64. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS, KEY_LENGTH);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) }, expected.length);
  return timingSafeEqual(actual, expected);
}

let dummyHash: Promise<string> | undefined;

/** Spend the time a real check would, so a login reveals nothing about which usernames exist. */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword('restfold-dummy-password');
  await verifyPassword(password, await dummyHash);
  return false;
}
