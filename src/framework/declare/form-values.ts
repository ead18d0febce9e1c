/**
 * An HTML form's values (`application/x-www-form-urlencoded`) read as JSON would carry them, by
 * each field's kind, as DRF's FormParser and its fields read a QueryDict: the serializer then
 * validates the body exactly as a JSON one, with the same errors.
 */
import { FieldError, type Field } from '../../core/fields.js';

/** DRF's BooleanField.TRUE_VALUES and FALSE_VALUES (case-insensitive here). */
const TRUE_TEXT: ReadonlySet<string> = new Set(['true', 'on', '1', 'yes', 'y', 't']);
const FALSE_TEXT: ReadonlySet<string> = new Set(['false', 'off', '0', 'no', 'n', 'f']);

const INTEGER = /^[+-]?\d+$/;
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;

/**
 * A model field's form text → its JSON value. The last value wins where a key is repeated (as
 * DRF's QueryDict); an empty one is null for a nullable field (a form cannot send null). Text
 * that does not read as the kind stays text, for the field to refuse as it refuses it in JSON.
 */
export function formFieldValue(field: Field, texts: readonly string[]): unknown {
  const text = texts.at(-1)!;
  if (text === '' && field.nullable) return null;
  // A file's text part is no upload: the field refuses it (null above clears a nullable one).
  if (field.file) return text;
  switch (field.valueType) {
    case 'integer':
      // Digits beyond 2^53 stay text: a bigint field takes them as JSON's string of digits.
      return INTEGER.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : text;
    case 'number':
      // A decimal takes its digits as text, exactly; a float the number they spell.
      return field.kind !== 'decimal' && NUMBER.test(text) ? Number(text) : text;
    case 'boolean': {
      const lower = text.toLowerCase();
      return TRUE_TEXT.has(lower) ? true : FALSE_TEXT.has(lower) ? false : text;
    }
    case 'json':
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new FieldError('Value must be valid JSON.');
      }
    default:
      return text;
  }
}

/** A many-to-many's ids (or slugs) from a key repeated once per value (a multiple `<select>`); empty values are none. */
export function formListValue(texts: readonly string[], slugs: boolean): unknown[] {
  const given = texts.filter((text) => text !== '');
  return slugs ? given : given.map((text) => (INTEGER.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : text));
}
