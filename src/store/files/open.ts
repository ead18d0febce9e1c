/**
 * FILES_STORAGE names the store: `file:<folder>` (relative to the working
 * directory) or `s3://<bucket>/<prefix>`, with the S3 settings from the
 * environment (docs: the Files guide).
 */
import type { FileStorage } from './storage.js';

export interface FileStorageSettings {
  /** FILES_STORAGE. */
  url: string;
  /** FILES_S3_ENDPOINT, FILES_S3_REGION, FILES_S3_FORCE_PATH_STYLE and the standard AWS_* credentials. */
  env: Record<string, string | undefined>;
}

export async function openFileStorage(settings: FileStorageSettings): Promise<FileStorage> {
  const scheme = settings.url.slice(0, settings.url.indexOf(':') + 1);
  if (scheme === 'file:') return (await import('./disk.js')).diskStorage(settings.url.slice('file:'.length));
  if (scheme === 's3:') return (await import('./s3.js')).s3Storage(settings.url, settings.env);
  throw new Error(`FILES_STORAGE must start with file: or s3:// (got ${JSON.stringify(settings.url.slice(0, 40))}).`);
}
