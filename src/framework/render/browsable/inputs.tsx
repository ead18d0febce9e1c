/**
 * Form inputs of the field kinds that have a control of their own (core/field-kinds.ts): a
 * `<select>` of a choice's values, the browser's date and time pickers, a number input stepping by
 * a decimal's places. /api/static/browsable.js reads each back into JSON by its `data-kind`.
 */
import type { JSX } from 'preact';
import type { Field } from '../../../core/fields.js';
import { stringifyJson } from '../../../core/json.js';

export interface InputProps {
  readonly id: string;
  readonly name: string;
  readonly 'data-kind': string;
}

/** A field's declared bounds as an input's `min` and `max`: number, date and time inputs hold to them. */
export function boundsOf(field: Field): { min?: string; max?: string } {
  const { minValue, maxValue } = field.limits ?? {};
  return { ...(minValue !== undefined && { min: minValue }), ...(maxValue !== undefined && { max: maxValue }) };
}

/** Each declared pattern's `pattern` attribute, made once (null: it has none). */
const attributes = new WeakMap<RegExp, string | null>();

/**
 * A pattern as an input's `pattern` attribute, which the browser matches against the whole value
 * with the `v` flag: a search for it, then. None where it has flags the attribute cannot carry
 * (i, m, s), or where the `v` flag's stricter syntax refuses it (a browser would ignore it).
 */
function patternAttribute(pattern: RegExp): string | null {
  let attribute = attributes.get(pattern);
  if (attribute === undefined) {
    attribute = /^[uv]?$/.test(pattern.flags) ? `.*(?:${pattern.source}).*` : null;
    try {
      if (attribute !== null) new RegExp(attribute, 'v');
    } catch {
      attribute = null;
    }
    attributes.set(pattern, attribute);
  }
  return attribute;
}

/** A text's declared minimum length and pattern as an input's `minlength` and `pattern`; the server checks both either way. */
export function textRulesOf(field: Field): { minlength?: number; pattern?: string } {
  const { minLength, pattern } = field.limits ?? {};
  const attribute = pattern && patternAttribute(pattern);
  return { ...(minLength !== undefined && { minlength: minLength }), ...(attribute && { pattern: attribute }) };
}

/** A decimal's step: one unit of its last place (`0.01` for two places). */
const stepOf = (places: number): string => (places === 0 ? '1' : `0.${'1'.padStart(places, '0')}`);

/** The kind's own input showing `shown` (its rendered value as text), or undefined where a text box serves. */
export function kindInput(field: Field, common: InputProps, value: unknown, shown: string): JSX.Element | undefined {
  switch (field.kind) {
    case 'choice':
      return (
        <select {...common}>
          {field.required !== 'always' || value === undefined ? <option value="">---------</option> : null}
          {(field.choices ?? []).map((choice) => (
            <option key={choice} value={choice} selected={choice === shown}>
              {choice}
            </option>
          ))}
        </select>
      );
    case 'date':
      return <input type="date" {...common} {...boundsOf(field)} value={shown} />;
    case 'time':
      return <input type="time" step="0.001" {...common} {...boundsOf(field)} value={shown} />;
    case 'duration':
      return <input type="text" {...common} value={shown} placeholder="P1DT2H30M" />;
    case 'decimal':
      return <input type="number" step={stepOf(field.column.places ?? 0)} {...common} {...boundsOf(field)} value={shown} />;
    case 'float':
      return <input type="number" step="any" {...common} {...boundsOf(field)} value={shown} />;
    case 'bigint':
      // Text: a number input would round digits beyond 2^53.
      return <input type="text" inputMode="numeric" pattern="-?[0-9]+" {...common} value={shown} />;
    case 'url':
      return <input type="url" {...common} {...textRulesOf(field)} value={shown} />;
    case 'json':
      return (
        <textarea {...common} rows={4}>
          {value === undefined || value === null ? '' : stringifyJson(value, 2)}
        </textarea>
      );
    default:
      return undefined;
  }
}
