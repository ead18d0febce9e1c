/**
 * The RealWorld (Conduit) backend in examples/realworld, black-box over HTTP: users, authentication
 * and profiles. The contract is the public spec, gothinkster/realworld `api/openapi.yml` (1.1.0;
 * paths under `/api`), with the behaviours RealWorld's own API tests check
 * (`api/Conduit.postman_collection.json`) and the spec's pages on endpoints and errors. Operations
 * here: Login, CreateUser, GetCurrentUser, UpdateCurrentUser, GetProfileByUsername,
 * FollowUserByUsername, UnfollowUserByUsername. Runs on SQLite, or PostgreSQL with
 * RESTFOLD_TEST_DB=postgres; needs `npm run build` first (it serves dist/cli.js).
 */
import { describe, expect, it } from 'vitest';
import { expectErrors, expectProfile, expectStatus, expectUser, register, useConduit } from './support.js';

const call = useConduit();

describe('POST /users (CreateUser)', () => {
  it('registers a user: 201 with the User, a token that authenticates, bio and image empty', async () => {
    const body = { user: { username: 'jacob', email: 'jake@jake.jake', password: 'jakejake' } };
    const user = expectUser(await call('POST', '/users', { body }), 201);
    expect(user).toMatchObject({ username: 'jacob', email: 'jake@jake.jake', bio: null, image: null });
    expect(user.token).not.toBe('');
    expect(expectUser(await call('GET', '/user', { token: user.token }))).toMatchObject({ username: 'jacob', email: 'jake@jake.jake' });
  });

  it.each(['username', 'email', 'password'])('refuses a registration without %s: 422 naming it', async (missing) => {
    const user: Record<string, string> = { username: `no-${missing}`, email: `no-${missing}@example.com`, password: 'a-password-1' };
    delete user[missing];
    expectErrors(await call('POST', '/users', { body: { user } }), new RegExp(missing, 'i'));
  });

  it.each(['username', 'email'])('refuses a blank %s: 422 naming it', async (blank) => {
    const user = { username: `blank-${blank}`, email: `blank-${blank}@example.com`, password: 'a-password-1', [blank]: '' };
    expectErrors(await call('POST', '/users', { body: { user } }), new RegExp(blank, 'i'));
  });

  it('refuses a username or an email already taken: 422 naming it, and the first account is untouched', async () => {
    const first = await register(call, 'taken');
    const sameName = { username: 'taken', email: 'other@example.com', password: 'a-password-1' };
    expectErrors(await call('POST', '/users', { body: { user: sameName } }), /username/i);
    const sameEmail = { username: 'other', email: first.email, password: 'a-password-1' };
    expectErrors(await call('POST', '/users', { body: { user: sameEmail } }), /email/i);
    expectUser(await call('POST', '/users/login', { body: { user: { email: first.email, password: first.password } } }));
  });

  it('refuses an email another account has in another case (one mailbox, one account): 422 naming it', async () => {
    const first = await register(call, 'mailbox');
    for (const email of [first.email.toUpperCase(), 'Mailbox@Example.com']) {
      expectErrors(await call('POST', '/users', { body: { user: { username: `other-${email.length}`, email, password: 'a-password-1' } } }), /email/i);
    }
    const other = await register(call, 'notmailbox');
    expectErrors(await call('PUT', '/user', { token: other.token, body: { user: { email: 'MAILBOX@example.com' } } }), /email/i);
    expect(expectUser(await call('GET', '/user', { token: other.token })).email).toBe(other.email);
    // The account keeps its own address, and may change its case.
    expect(expectUser(await call('PUT', '/user', { token: first.token, body: { user: { email: 'MailBox@example.com' } } })).email).toBe('MailBox@example.com');
    expectUser(await call('POST', '/users/login', { body: { user: { email: 'MailBox@example.com', password: first.password } } }));
  });

  it('refuses a body without the "user" wrapper, and one that is not JSON: 422', async () => {
    expectErrors(await call('POST', '/users', { body: { username: 'bare', email: 'bare@example.com', password: 'a-password-1' } }));
    expectErrors(await call('POST', '/users', { body: '{"user": {' }));
  });
});

describe('POST /users/login (Login)', () => {
  it('answers the right email and password with the User and a fresh working token', async () => {
    const account = await register(call, 'logger');
    const user = expectUser(await call('POST', '/users/login', { body: { user: { email: account.email, password: account.password } } }));
    expect(user).toMatchObject({ username: 'logger', email: account.email });
    expect(expectUser(await call('GET', '/user', { token: user.token })).username).toBe('logger');
  });

  it('answers a wrong password and an unknown email alike: 401, no token', async () => {
    const account = await register(call, 'guarded');
    for (const user of [{ email: account.email, password: 'not-the-password' }, { email: 'nobody@example.com', password: account.password }]) {
      const reply = await call('POST', '/users/login', { body: { user } });
      expectStatus(reply, 401);
      expect((reply.json as { user?: unknown } | undefined)?.user).toBeUndefined();
    }
  });

  it.each(['email', 'password'])('refuses a login without %s: 422 naming it', async (missing) => {
    const user: Record<string, string> = { email: 'someone@example.com', password: 'a-password-1' };
    delete user[missing];
    expectErrors(await call('POST', '/users/login', { body: { user } }), new RegExp(missing, 'i'));
  });
});

describe('GET /user (GetCurrentUser)', () => {
  it('answers the signed-in user, with a token', async () => {
    const account = await register(call, 'current');
    expect(expectUser(await call('GET', '/user', { token: account.token }))).toMatchObject({ username: 'current', email: account.email, bio: null, image: null });
  });

  it('is 401 without a token, with a bad token, and with a credential in another scheme than the spec\'s', async () => {
    const account = await register(call, 'schemes');
    expectStatus(await call('GET', '/user'), 401);
    expectStatus(await call('GET', '/user', { token: 'not.a.token' }), 401);
    expectStatus(await call('GET', '/user', { authorization: `Token ${account.token}x` }), 401);
    expectStatus(await call('GET', '/user', { authorization: `Basic ${Buffer.from(`${account.email}:${account.password}`).toString('base64')}` }), 401);
  });
});

describe('PUT /user (UpdateCurrentUser)', () => {
  it('updates only the fields sent and answers the whole User', async () => {
    const account = await register(call, 'updater');
    const changed = { bio: 'I like to skateboard', image: 'https://example.com/me.jpg' };
    const user = expectUser(await call('PUT', '/user', { token: account.token, body: { user: changed } }));
    expect(user).toMatchObject({ username: 'updater', email: account.email, ...changed });
    expect(expectUser(await call('GET', '/user', { token: account.token }))).toMatchObject({ username: 'updater', ...changed });
    // The profile other users see carries the same bio and image.
    expect(expectProfile(await call('GET', '/profiles/updater'))).toStrictEqual({ username: 'updater', ...changed, following: false });
  });

  it('clears a bio and removes an avatar, as the settings page sends them: "" (the bio then "", the image null)', async () => {
    const account = await register(call, 'clearer');
    const set = { bio: 'I like to skateboard', image: 'https://example.com/me.jpg' };
    expectUser(await call('PUT', '/user', { token: account.token, body: { user: set } }));
    const cleared = expectUser(await call('PUT', '/user', { token: account.token, body: { user: { bio: '', image: '' } } }));
    expect(cleared).toMatchObject({ username: 'clearer', bio: '', image: null });
    expect(expectUser(await call('GET', '/user', { token: account.token }))).toMatchObject({ bio: '', image: null });
    expect(expectProfile(await call('GET', '/profiles/clearer'))).toStrictEqual({ username: 'clearer', bio: '', image: null, following: false });
    // One at a time, as a form may send only what changed.
    expectUser(await call('PUT', '/user', { token: account.token, body: { user: set } }));
    expect(expectUser(await call('PUT', '/user', { token: account.token, body: { user: { bio: '' } } }))).toMatchObject({ bio: '', image: set.image });
    expect(expectUser(await call('PUT', '/user', { token: account.token, body: { user: { image: '' } } }))).toMatchObject({ bio: '', image: null });
    // An address that is not empty is still checked.
    expectErrors(await call('PUT', '/user', { token: account.token, body: { user: { image: 'not a url' } } }), /image/i);
  });

  it('changes email, username and password: login needs the new ones, the old ones fail', async () => {
    const account = await register(call, 'renamer');
    const changed = { email: 'renamed@example.com', username: 'renamed', password: 'a-new-password-2' };
    expect(expectUser(await call('PUT', '/user', { token: account.token, body: { user: changed } }))).toMatchObject({ email: changed.email, username: changed.username });
    expectStatus(await call('POST', '/users/login', { body: { user: { email: account.email, password: account.password } } }), 401);
    expectStatus(await call('POST', '/users/login', { body: { user: { email: changed.email, password: account.password } } }), 401);
    const user = expectUser(await call('POST', '/users/login', { body: { user: { email: changed.email, password: changed.password } } }));
    expect(user.username).toBe('renamed');
    expect(expectProfile(await call('GET', '/profiles/renamed')).username).toBe('renamed');
    expectStatus(await call('GET', '/profiles/renamer'), 404);
  });

  it('refuses an email or username another user has: 422 naming it, nothing changed', async () => {
    const holder = await register(call, 'holder');
    const account = await register(call, 'wanter');
    expectErrors(await call('PUT', '/user', { token: account.token, body: { user: { email: holder.email } } }), /email/i);
    expectErrors(await call('PUT', '/user', { token: account.token, body: { user: { username: 'holder' } } }), /username/i);
    expect(expectUser(await call('GET', '/user', { token: account.token }))).toMatchObject({ username: 'wanter', email: account.email });
  });

  it('refuses an update with no field, as the spec requires at least one: 422', async () => {
    const account = await register(call, 'idle');
    expectErrors(await call('PUT', '/user', { token: account.token, body: { user: {} } }));
  });

  it('is 401 without a token', async () => {
    expectStatus(await call('PUT', '/user', { body: { user: { bio: 'anonymous' } } }), 401);
  });
});

describe('GET /profiles/{username} (GetProfileByUsername), POST and DELETE /profiles/{username}/follow', () => {
  it('shows a profile to anyone, with following false for anonymous callers', async () => {
    await register(call, 'celeb');
    expect(expectProfile(await call('GET', '/profiles/celeb'))).toStrictEqual({ username: 'celeb', bio: null, image: null, following: false });
  });

  it('follows and unfollows: following follows the caller, and other callers are unaffected', async () => {
    await register(call, 'star');
    const fan = await register(call, 'fan');
    const bystander = await register(call, 'bystander');
    expect(expectProfile(await call('GET', '/profiles/star', { token: fan.token })).following).toBe(false);

    expect(expectProfile(await call('POST', '/profiles/star/follow', { token: fan.token }))).toStrictEqual({ username: 'star', bio: null, image: null, following: true });
    expect(expectProfile(await call('GET', '/profiles/star', { token: fan.token })).following).toBe(true);
    expect(expectProfile(await call('GET', '/profiles/star', { token: bystander.token })).following).toBe(false);
    expect(expectProfile(await call('GET', '/profiles/star')).following).toBe(false);

    expect(expectProfile(await call('DELETE', '/profiles/star/follow', { token: fan.token }))).toMatchObject({ username: 'star', following: false });
    expect(expectProfile(await call('GET', '/profiles/star', { token: fan.token })).following).toBe(false);
  });

  it('follows and unfollows idempotently: twice is the same as once', async () => {
    await register(call, 'twice');
    const fan = await register(call, 'twicefan');
    for (let round = 0; round < 2; round++) expect(expectProfile(await call('POST', '/profiles/twice/follow', { token: fan.token })).following).toBe(true);
    for (let round = 0; round < 2; round++) expect(expectProfile(await call('DELETE', '/profiles/twice/follow', { token: fan.token })).following).toBe(false);
  });

  it('is 404 for a username nobody has, for viewing, following and unfollowing', async () => {
    const fan = await register(call, 'seeker');
    expectStatus(await call('GET', '/profiles/nobody-here'), 404);
    expectStatus(await call('POST', '/profiles/nobody-here/follow', { token: fan.token }), 404);
    expectStatus(await call('DELETE', '/profiles/nobody-here/follow', { token: fan.token }), 404);
  });

  it('is 401 to follow or unfollow without a token, and to view with a bad one', async () => {
    await register(call, 'private');
    expectStatus(await call('POST', '/profiles/private/follow'), 401);
    expectStatus(await call('DELETE', '/profiles/private/follow'), 401);
    expectStatus(await call('GET', '/profiles/private', { token: 'not.a.token' }), 401);
  });
});
