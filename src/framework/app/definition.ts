/**
 * An app as its author declares it (`defineApp`), what it is built with, and its migrations run
 * in order: the framework's, then its own.
 */
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../store/connection/database.js';
import type { AdminOptions } from '../admin/declare.js';
import accountMigrations from '../../store/accounts/migrations/index.js';
import { migrate, migrationsTable, type Migrations } from '../../store/schema/migrations.js';
import { recordedState } from '../../store/schema/operations.js';
import { emptyTables } from '../../store/schema/empty.js';
import type { RouterDefinition } from '../routing/routers.js';
import type { ExceptionHandler } from '../base/style.js';
import type { Collection, Envelope, Pagination } from '../declare/collection.js';
import type { Model } from '../declare/model.js';
import type { UserModel } from '../declare/users/user-model.js';
import { assertScope } from '../declare/scope.js';
import type { BucketRates } from '../stages/throttling.js';
import { versioningOf, type Versioning, type VersionsDeclaration } from '../stages/versioning.js';
import type { Config } from './config.js';
import type { ForcedUser } from '../stages/authentication/index.js';

/** What `buildApp` serves an app with: its database and configuration. */
export interface AppContext {
  readonly database: Database;
  readonly config: Config;
  /** Where log lines go (standard output when absent); lets tests read them. */
  readonly logStream?: { write(line: string): void };
  /**
   * Testing only, as DRF's force_authenticate: asked first for each request, the id it answers names
   * the request's user whatever credentials it carries (an inactive or missing user is a 401).
   * restfold/testing sets it for `client.as(user)`, answering only for the requests its client
   * injects in-process; `serve` never sets it, so no request over the network can reach it.
   */
  readonly forcedUser?: ForcedUser;
}

/** An app: its collections and what they share (made with `defineApp`; an app module's default export). */
export interface AppDefinition {
  readonly collections: readonly Collection[];
  /** The admin at ADMIN_PREFIX: which collections it shows and how (`modelAdmin`); left out, every top-level list with defaults (docs/admin.md). */
  readonly admin?: AdminOptions;
  /**
   * The app's own user model (Django's AUTH_USER_MODEL): `User.extend({ bio: fields.text({ nullable: true }) })`.
   * Its migrations alter the framework's `users` table; createuser checks its fields. Default: the framework's `User`.
   */
  readonly userModel?: UserModel;
  /** Models beside the collections' whose tables the app's migrations make (a model only its `routes` serve). */
  readonly models?: readonly Model[];
  /**
   * The app's migrations; they run after the framework's (users, permissions, tokens). Left out, the
   * CLI finds them by convention in `migrations/` beside the app's module (loadMigrations); given
   * (the index module `restfold makemigrations` keeps there, or any other), they are used instead.
   */
  readonly migrations?: Migrations;
  /** Throttle buckets' own rates, by collection name, in place of THROTTLE_ANON / THROTTLE_USER. */
  readonly throttles?: Readonly<Record<string, BucketRates>>;
  /**
   * Routes outside the collection API (a Fastify plugin body). Their requests are authenticated as
   * the collections' are (`request.user`); see requirePermissions and throttleRequest.
   */
  readonly routes?: (app: FastifyInstance, context: AppContext) => void | Promise<void>;
  /** false: the routes' requests are not authenticated (`request.user` stays null, any credential is ignored). Default true. */
  readonly authenticateRoutes?: boolean;
  // The API's style (docs/api-style.md); each left out keeps the style SPEC.md describes.
  /** Where the collections are served; the first router also serves `/auth/` and `/schema/`. Default: one at /api/v1, slashes required. */
  readonly routers?: readonly RouterDefinition[];
  /** The pagination of collections that name none (default `page`). */
  readonly pagination?: Pagination;
  /** The envelope of each collection that names none, by the collection's name (default none). */
  readonly envelope?: (collection: string) => Envelope | undefined;
  /** Chooses the status and body of the collection API's errors (DRF's EXCEPTION_HANDLER). */
  readonly exceptionHandler?: ExceptionHandler;
  /** The schemes `Authorization` accepts, for every authentication kind; the first is WWW-Authenticate's. Default `['Bearer', 'Token']`. */
  readonly credentialKeywords?: readonly string[];
  /**
   * How clients name the API's version, and which exist (DRF's versioning classes): the path
   * (`/api/v{version}/…`), an Accept parameter or a query parameter (docs/guides/collections-and-actions.md, Versioning).
   * Left out: no versions, and nothing of them in any path or answer.
   */
  readonly versions?: VersionsDeclaration;
}

/** The app, as declared; refused at once where a declaration cannot hold (a scope that is no function of the request). */
export function defineApp(definition: AppDefinition): AppDefinition {
  for (const { name, scope } of definition.collections) assertScope(name, scope);
  appVersioning(definition);
  return definition;
}

/** The app's versions, checked, and each version its serializers name one of them. */
export function appVersioning(definition: AppDefinition): Versioning | undefined {
  const versioning = definition.versions && versioningOf(definition.versions);
  for (const { name, serializers } of definition.collections) {
    for (const version of serializers.flatMap(({ versions }) => versions)) {
      if (!versioning?.allowed.includes(version)) throw new Error(`${name}: a serializer's versions name "${version}", which is not among the app's versions.`);
    }
  }
  return versioning;
}

/** The names of the migrations one migrateApp ran, by whose they are. */
export interface AppliedMigrations {
  /** The framework's (its users, permissions, tokens, sessions), tracked in `restfold_migrations`. */
  readonly framework: readonly string[];
  /** The app's own, tracked in `app_migrations`. */
  readonly app: readonly string[];
  /** Contract steps, and the migrations after them, that wait for `migrate --contract`, named as `appliedNames` names them. */
  readonly held: readonly string[];
}

/** Whose migrations a database records, each in its own table: the framework's and the app's. */
const FRAMEWORK = 'restfold';
const APP = 'app';

const qualified = (whose: string, names: readonly string[]): string[] => names.map((name) => `${whose}.${name}`);

/**
 * The framework's migrations (generated from its declarations: store/accounts/migrations/), then the
 * app's. `contract`: run contract steps too (`migrate --contract`), once no server of the release before serves.
 */
export async function migrateFrameworkAndApp(database: Database, definition: AppDefinition, contract = false): Promise<AppliedMigrations> {
  const framework = await migrate(database, FRAMEWORK, accountMigrations, undefined, contract);
  const app = await migrate(database, APP, definition.migrations ?? {}, recordedState(accountMigrations), contract);
  return { framework: framework.applied, app: app.applied, held: [...qualified(FRAMEWORK, framework.held), ...qualified(APP, app.held)] };
}

/** The framework's own migrations alone (its accounts' tables): what the accounts' commands need. */
export async function migrateFramework(database: Database, contract = false): Promise<AppliedMigrations> {
  const { applied, held } = await migrate(database, FRAMEWORK, accountMigrations, undefined, contract);
  return { framework: applied, app: [], held: qualified(FRAMEWORK, held) };
}

/**
 * Deletes every row of the app's and the framework's tables (users, tokens, sessions included),
 * keeping the tables and the records of the migrations that made them: a test's fresh start
 * (restfold/testing's `reset`), as Django's TestCase gives each test. Ids start again from 1.
 */
export const emptyAppTables = (database: Database): Promise<void> => emptyTables(database, [FRAMEWORK, APP].map(migrationsTable));

/**
 * The migrations applied, in the order they ran, each named with the app it is of, as Django's
 * `migrate` names them (`restfold.0001_initial`, `app.0001_initial`): the framework's and the
 * app's have names in common.
 */
export const appliedNames = ({ framework, app }: AppliedMigrations): string[] => [...qualified(FRAMEWORK, framework), ...qualified(APP, app)];

/** migrateFrameworkAndApp's names in the order they ran. */
export async function migrateApp(database: Database, definition: AppDefinition): Promise<string[]> {
  const { framework, app } = await migrateFrameworkAndApp(database, definition);
  return [...framework, ...app];
}

