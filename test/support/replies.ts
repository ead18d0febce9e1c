/** How many replies answered each status, `{ 201: 5, 400: 25 }`: what concurrent requests are asserted by. */
export const statusCounts = (replies: readonly { readonly status: number }[]): Record<number, number> =>
  replies.reduce<Record<number, number>>((counts, { status }) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {});
