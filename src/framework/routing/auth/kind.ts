/** One authentication kind as the app assembles it: its stage's Authenticator and the endpoints that hand out and take back its credentials. */
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../../store/connection/database.js';
import type { AuthUser } from '../../base/auth-user.js';
import type { Authenticator } from '../../stages/authentication/index.js';

/** Told the user whose credential an endpoint just ended (their live streams are checked again: app/live.ts). */
export type CredentialEnded = (userId: number) => void;

export interface AuthenticationKind {
  readonly authenticator: Authenticator;
  /** Registers the kind's endpoints on the API instance (under `/auth/`). */
  mount(instance: FastifyInstance): void;
  /** A new credential of this kind for an active user as just read (an API token, a JWT access token), written through `database`; kinds that hand out none to an app's code have none. */
  issue?(database: Database, user: AuthUser): Promise<string>;
}
