/** A model as the framework declares it: the core's table and fields, with the rules every collection over it keeps. */
import { model as coreModel, type Model as CoreModel, type Table } from '../../core/model.js';
import type { Field, JsonSchema } from '../../core/fields.js';
import type { TableFacts } from '../../core/schema.js';
import type { Row } from '../../core/rows.js';
import type { MaybePromise } from '../../core/maybe-promise.js';
import type { Database } from '../../store/connection/database.js';
import type { RecordId } from '../../store/read/records.js';
import type { AuthUser } from '../base/auth-user.js';
import type { Permission } from './permission-classes.js';

/** An update of one record, as its model's rules see it. */
export interface RecordUpdate {
  /** Inside `beforeStore`, the update's transaction. */
  readonly database: Database;
  readonly id: RecordId;
  /** The validated values about to be stored. */
  readonly values: Row;
  /** The request body as sent (where the rules' `inputs` are). */
  readonly body: Row;
  readonly user: AuthUser | null;
  /**
   * Counts a check of the acting user's own password, one the body sent (a current password), as a
   * login counts: against THROTTLE_LOGIN per client address, then per their account; 429 over either.
   * Call it before the check.
   */
  countPasswordCheck(): Promise<void>;
}

/** What every update of a model's records takes and does, whichever collection serves them. */
export interface UpdateRules {
  /** Body fields an update accepts beside the serializer's: never stored or rendered, read by `check`. */
  readonly inputs: Readonly<Record<string, JsonSchema>>;
  /** Once the body is valid, before the transaction (so it may be slow): throws an ApiError to refuse. */
  check(update: RecordUpdate): MaybePromise<void>;
  /** In the update's transaction, with the record locked (`stored`, as read now), before its values are stored. */
  beforeStore(update: RecordUpdate, stored: Row): Promise<void>;
  /**
   * The fields whose update calls `beforeStore` (every update, when not given). An update that
   * calls it is a transaction; one that does not may be one conditional statement.
   */
  readonly beforeStoreOn?: readonly string[];
}

/** Rules a model keeps whatever the collections over it declare (a user record's, say), and its table's facts (indexes, unique-together). */
export interface ModelRules extends TableFacts {
  /** Columns read with every record though no serializer shows them (what `permissions` look at); never rendered. */
  readonly reads?: readonly string[];
  /** Checked beside every collection's own permissions. */
  readonly permissions?: readonly Permission[];
  readonly updates?: UpdateRules;
  /** Each new record's validated values, before any is stored: throws an ApiError to refuse. */
  readonly creates?: (values: Row, user: AuthUser | null) => void;
  /**
   * Columns only the framework's own code reads and writes (a user's credential version): no
   * serializer shows or writes them, no filter or ordering reaches them (refused at declaration).
   */
  readonly internal?: readonly string[];
}

/** A declared model, as `model()` makes it. */
export type Model = CoreModel<ModelRules>;

/** The table's internal columns (ModelRules.internal): a table of the app's is a Model, whose rules may name some. */
export const internalColumns = (table: Table): readonly string[] => (table as Model).rules?.internal ?? [];

/**
 * A model: a table's name, its fields (its columns) and its rules (constraints, indexes, permissions,
 * updates). The model is the schema: migrations are generated from it (docs/guides/models-and-migrations.md).
 */
export const model: (table: string, fields: Record<string, Field>, rules?: ModelRules) => Model = coreModel;
