/** A login action as an app may write one: the body handed to `credentials.check` as it came. */
import { allowAny, ApiError, type CredentialCheck, type CustomAction } from '../../src/framework/index.js';

/** 401 when the body names no one; the user's name, and with `issue` a new token, otherwise. */
export const loginAction = ({ issue = false } = {}): CustomAction => ({
  detail: false,
  method: 'POST',
  permissions: [allowAny],
  handler: async ({ body, credentials }) => {
    const user = await credentials.check(body as CredentialCheck);
    if (!user) throw new ApiError(401, 'authentication_failed', 'Wrong credentials.');
    return { username: user.username, ...(issue && { token: await credentials.issue(user) }) };
  },
});
