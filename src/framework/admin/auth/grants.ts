/**
 * A multi-select of grants or memberships saved as the API's nested lists take them: one POST per
 * value added and one DELETE per value removed, each against what the form was shown with (its
 * hidden `initial_<name>` fields), not against what is stored at save time. Two staff editing one
 * group at once thus each add and remove only what they changed, and neither undoes the other's
 * grant; Django's admin writes the whole list, and the last save wins.
 */
import type { FastifyRequest } from 'fastify';
import { PERMISSION_NAME, PERMISSION_NAME_RULE } from '../../declare/users/group-models.js';
import type { Collection } from '../../declare/collection.js';
import { callApi, refusal } from '../api.js';
import { listOf } from '../answers.js';
import { initialField, otherField } from './pages/multi-select.js';

/** A nested list of links (`/auth/groups/3/permissions/`) and the field each link names (`name`, `group_id`). */
export interface Links {
  readonly url: string;
  readonly key: string;
  /** A collection styled as the list is (its envelope), to read the list's answer. */
  readonly styled: Collection;
}

/** What a multi-select posted: its picks and, where it has one, its box of other names. */
export function picked(form: URLSearchParams, name: string): string[] {
  const others = (form.get(otherField(name)) ?? '').split(/[\s,]+/).filter((other) => other !== '');
  return [...new Set([...form.getAll(name), ...others])];
}

export const initialOf = (form: URLSearchParams, name: string): string[] => form.getAll(initialField(name));

/** The picked permission names that are no names at all, as the field's messages (checked before anything is written). */
export function badNames(names: readonly string[]): string[] | undefined {
  const bad = names.filter((name) => !PERMISSION_NAME.test(name));
  return bad.length > 0 ? [`Not a valid permission name, ${PERMISSION_NAME_RULE}: ${bad.join(', ')}.`] : undefined;
}

async function holds(request: FastifyRequest, links: Links, value: string): Promise<boolean> {
  const answer = await callApi(request, { method: 'GET', url: `${links.url}?${new URLSearchParams({ [links.key]: value }).toString()}` });
  return answer.status === 200 && listOf(links.styled, answer.body).rows.length > 0;
}

/**
 * Adds what `wanted` has and `initial` had not, removes what `initial` had and `wanted` has not;
 * returns the API's refusals. A value another editor added meanwhile is no refusal: it is there.
 */
export async function saveLinks(request: FastifyRequest, csrfToken: string, links: Links, initial: readonly string[], wanted: readonly string[]): Promise<string[]> {
  const refused: string[] = [];
  const before = new Set(initial);
  const after = new Set(wanted);
  for (const value of after) {
    if (before.has(value)) continue;
    const answer = await callApi(request, { method: 'POST', url: links.url, form: new URLSearchParams([[links.key, value]]), csrfToken });
    if (answer.status >= 300 && !(answer.status === 400 && (await holds(request, links, value)))) refused.push(`${value}: ${refusal(answer).message}`);
  }
  for (const value of before) {
    if (after.has(value)) continue;
    const answer = await callApi(request, { method: 'DELETE', url: `${links.url}?${new URLSearchParams({ [links.key]: value }).toString()}`, csrfToken });
    if (answer.status >= 300) refused.push(`${value}: ${refusal(answer).message}`);
  }
  return refused;
}
