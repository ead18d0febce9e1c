/**
 * The S3 settings, read once when the store opens: a bad value stops the
 * process with a message naming the variable (docs: the Files guide, S3).
 *
 *   FILES_STORAGE=s3://<bucket>/<prefix>   where objects go; the prefix is optional
 *   FILES_S3_ENDPOINT                      another S3-compatible store (MinIO, R2, ...); AWS when unset
 *   FILES_S3_REGION                        else AWS_REGION, else us-east-1
 *   FILES_S3_FORCE_PATH_STYLE              true: `<endpoint>/<bucket>/<key>` (MinIO), not `<bucket>.<endpoint>`
 *   FILES_S3_REDIRECT                      true: downloads answer 302 to a presigned URL
 *   FILES_S3_UPLOADS                       uploads sent to the store at once (default 2); others wait their turn
 *   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
 *                                          else the SDK's own chain (instance or task role, profile)
 */
import { booleanSetting } from '../../core/settings.js';

export interface S3Settings {
  bucket: string;
  /** Prepended to every key, without slashes at either end; '' for none. */
  prefix: string;
  endpoint: string | undefined;
  region: string;
  forcePathStyle: boolean;
  /** Uploads sent at once, each holding up to two 5 MiB parts in memory (FILES_S3_UPLOADS). */
  uploads: number;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
}

type Env = Readonly<Record<string, string | undefined>>;

// Bucket names as S3 allows them (3-63 of lower-case letters, digits, dots, hyphens).
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
// Path segments an operator would write; no `.`/`..`, so the prefix means the same on every store.
const PREFIX = /^(?!\.\.?(\/|$))[A-Za-z0-9._-]+(\/(?!\.\.?(\/|$))[A-Za-z0-9._-]+)*$/;

function uploadsAtOnce(env: Env): number {
  const text = env.FILES_S3_UPLOADS?.trim() || '2';
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 1000) throw new Error(`FILES_S3_UPLOADS must be an integer from 1 to 1000 (got ${JSON.stringify(env.FILES_S3_UPLOADS)}).`);
  return Number(text);
}

export function parseS3Settings(url: string, env: Env): S3Settings {
  const match = /^s3:\/\/([^/]*)\/?(.*)$/.exec(url);
  const bucket = match?.[1] ?? '';
  const prefix = (match?.[2] ?? '').replace(/\/+$/, '');
  if (!BUCKET.test(bucket)) throw new Error(`FILES_STORAGE must be s3://<bucket>/<prefix> with a valid bucket name (got ${JSON.stringify(url.slice(0, 80))}).`);
  if (prefix !== '' && !PREFIX.test(prefix)) throw new Error(`FILES_STORAGE's prefix must be path segments of letters, digits, '.', '_' and '-' (got ${JSON.stringify(prefix.slice(0, 80))}).`);
  const endpoint = env.FILES_S3_ENDPOINT || undefined;
  if (endpoint !== undefined && !/^https?:\/\/[^/\s]+\/?$/.test(endpoint)) throw new Error(`FILES_S3_ENDPOINT must be http(s)://host[:port] (got ${JSON.stringify(endpoint.slice(0, 80))}).`);
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId !== !secretAccessKey) throw new Error('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together.');
  return {
    bucket,
    prefix,
    endpoint,
    region: env.FILES_S3_REGION || env.AWS_REGION || 'us-east-1',
    forcePathStyle: booleanSetting(env, 'FILES_S3_FORCE_PATH_STYLE', false),
    uploads: uploadsAtOnce(env),
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) } : undefined,
  };
}

/**
 * FILES_S3_REDIRECT: with an S3 store, whether a download answers 302 to a presigned URL
 * (the bytes then never pass through this process) rather than streaming them. Off by
 * default: the store must then be reachable by the clients, and the link leaves the API's origin.
 */
export function s3Redirects(env: Env): boolean {
  return booleanSetting(env, 'FILES_S3_REDIRECT', false);
}
