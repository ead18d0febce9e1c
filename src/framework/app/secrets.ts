/**
 * SECRET_KEY signs JWTs, session cookies and pagination cursors, each with a
 * key of its own derived from it. When it is not set, one is generated on
 * first start and kept in the data folder, readable by the owner only, so
 * restarts and sibling workers agree on it. The key itself is never logged.
 */
import { hkdfSync, randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { dataFolder, type Config } from './config.js';

const SECRET_FILE = 'secret_key';
const MIN_LENGTH = 32;

/** Writes a new key unless the file exists; link() makes the file appear whole, so a racing worker reads a complete key. */
async function createKeyFile(file: string): Promise<boolean> {
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  await writeFile(draft, `${randomBytes(48).toString('base64url')}\n`, { mode: 0o600 });
  try {
    await link(draft, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(draft);
  }
}

export async function resolveSecretKey(config: Pick<Config, 'secretKey' | 'databaseUrl'>, log: FastifyBaseLogger): Promise<string> {
  if (config.secretKey) return config.secretKey;
  const folder = dataFolder(config.databaseUrl);
  if (!folder) {
    log.warn('SECRET_KEY is not set and the database is in memory: using a key that lasts only as long as this process.');
    return randomBytes(48).toString('base64url');
  }
  const file = join(folder, SECRET_FILE);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const created = await createKeyFile(file);
  log.warn(
    { file },
    created
      ? 'SECRET_KEY is not set: generated a new key and stored it in the data folder (owner-only). Set SECRET_KEY to manage it yourself.'
      : 'SECRET_KEY is not set: using the key stored in the data folder.',
  );
  const key = (await readFile(file, 'utf8')).trim();
  if (key.length < MIN_LENGTH) throw new Error(`${file} holds no usable secret key; delete it to have a new one generated.`);
  return key;
}

/** What SECRET_KEY signs; each gets its own key. */
export type KeyPurpose = 'jwt' | 'cookie' | 'cursor' | 'files';
export type SigningKeys = Readonly<Record<KeyPurpose, Buffer>>;

/**
 * A key per purpose, derived from SECRET_KEY with HKDF-SHA256 and the purpose
 * as its label: what is signed for one use (a session cookie, say) can never
 * pass as another (a JWT), and none of them is signed with SECRET_KEY itself.
 */
export function signingKeys(secretKey: string): SigningKeys {
  const derive = (purpose: KeyPurpose): Buffer => Buffer.from(hkdfSync('sha256', secretKey, '', `restfold ${purpose} signing key`, 32));
  return { jwt: derive('jwt'), cookie: derive('cookie'), cursor: derive('cursor'), files: derive('files') };
}
