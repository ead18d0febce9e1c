/**
 * An upload judged by its bytes, never by the client's claimed type or file name: its type sniffed
 * from its first bytes, matched against the field's `accept`; an image's width and height read
 * from its header, within the field's bounds. Text that no signature names is text/plain (an HTML
 * page or an SVG so becomes a download, never a page of the API's origin).
 */
import { accepts } from '../../../core/file-fields.js';
import { FieldError, type FileRules } from '../../../core/fields.js';
import { loadedOnce } from '../../../core/load-once.js';

/** Bytes read before judging: enough for every signature, and for an image's header past its metadata (EXIF). */
export const HEAD_BYTES = 256 * 1024;

// Loaded with the first upload: an app (or a test file) with no file field does not load their
// many modules at start-up (docs/performance.md).
const sniffers = loadedOnce(() => Promise.all([import('file-type'), import('image-size')]));

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A head of bytes without a known signature: text when it decodes as UTF-8 without NUL (its end may cut a character). */
function looksLikeText(head: Buffer): boolean {
  if (head.includes(0)) return false;
  for (let cut = 0; cut < 4 && cut < head.length; cut++) {
    try {
      utf8.decode(head.subarray(0, head.length - cut));
      return true;
    } catch {
      // A character cut at the end: try a byte shorter.
    }
  }
  return head.length === 0;
}

export interface Judged {
  readonly contentType: string;
  readonly width?: number;
  readonly height?: number;
}

/** The upload's type (and dimensions), or FieldError saying what the field refuses of it. */
export async function judgeContent(head: Buffer, rules: FileRules): Promise<Judged> {
  const [{ fileTypeFromBuffer }, { imageSize }] = await sniffers();
  const sniffed = await fileTypeFromBuffer(head);
  const contentType = sniffed?.mime ?? (looksLikeText(head) ? 'text/plain' : 'application/octet-stream');
  if (rules.image) {
    // SVG is text here, never an image: it could carry script.
    if (!contentType.startsWith('image/') || contentType === 'image/svg+xml') throw new FieldError('Upload a valid image. The file you uploaded was either not an image or a corrupted image.');
    let size: { width?: number; height?: number };
    try {
      size = imageSize(head);
    } catch {
      throw new FieldError('Upload a valid image. The file you uploaded was either not an image or a corrupted image.');
    }
    const { width, height } = size;
    if (!width || !height) throw new FieldError('Upload a valid image. Its width and height could not be read.');
    const { maxWidth, maxHeight } = rules.image;
    if (maxWidth !== undefined && width > maxWidth) throw new FieldError(`Ensure the image is at most ${maxWidth} pixels wide (it is ${width}).`);
    if (maxHeight !== undefined && height > maxHeight) throw new FieldError(`Ensure the image is at most ${maxHeight} pixels high (it is ${height}).`);
    return { contentType, width, height };
  }
  if (!accepts(rules.accept, contentType)) throw new FieldError(`File type "${contentType}" is not allowed. Allowed: ${rules.accept!.join(', ')}.`);
  return { contentType };
}
