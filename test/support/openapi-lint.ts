/** An OpenAPI document linted as the project's documents must pass: Redocly's `recommended` rules. */
import { createConfig, lintFromString } from '@redocly/openapi-core';

/** Each problem Redocly finds in `document`, one line each (none: it passes). */
export async function lintProblems(document: unknown): Promise<string[]> {
  // The contract's paths end in a slash (docs/contract.md), so that one style rule is off.
  const config = await createConfig({ extends: ['recommended'], rules: { 'no-path-trailing-slash': 'off' } });
  const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config });
  return problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`);
}
