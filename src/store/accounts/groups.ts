/**
 * Groups (Django's auth.Group): their permission names and their members. Each grant and each
 * membership is a row of its own, added or removed by one statement that leaves any other row alone,
 * so concurrent changes to one group never undo each other. Names come checked by the caller.
 */
import { storeDatabase, transaction, type Database } from '../connection/database.js';

export interface GroupRow {
  readonly id: number;
  readonly name: string;
}

export async function listGroups(database: Database): Promise<GroupRow[]> {
  const rows = await storeDatabase(database).db.selectFrom('auth_groups').select(['id', 'name']).orderBy('name').execute();
  return rows.map((row) => ({ id: Number(row.id), name: row.name as string }));
}

/** The groups the user is in, by name. */
export async function groupsOf(database: Database, userId: number): Promise<GroupRow[]> {
  const rows = await storeDatabase(database)
    .db.selectFrom('auth_groups')
    .innerJoin('auth_user_groups', 'auth_user_groups.group_id', 'auth_groups.id')
    .select(['auth_groups.id', 'auth_groups.name'])
    .where('auth_user_groups.user_id', '=', userId)
    .orderBy('auth_groups.name')
    .execute();
  return rows.map((row) => ({ id: Number(row.id), name: row.name as string }));
}

/** The group of this exact name. */
export async function groupIdByName(database: Database, name: string): Promise<number | undefined> {
  const row = await storeDatabase(database).db.selectFrom('auth_groups').select('id').where('name', '=', name).executeTakeFirst();
  return row && Number(row.id);
}

/** A new group (a unique violation when the name is taken). */
export async function insertGroup(database: Database, name: string): Promise<number> {
  const row = await storeDatabase(database).db.insertInto('auth_groups').values({ name }).returning('id').executeTakeFirstOrThrow();
  return Number(row.id);
}

/**
 * Deletes the group, its grants and memberships (cascades), in one transaction; its members, so
 * their streams are checked again. The group's row is locked first, so no one joins it between the
 * read of its members and its deletion (a membership's foreign key waits on the lock, then fails).
 */
export function deleteGroup(database: Database, groupId: number): Promise<number[]> {
  return transaction(database, async (within) => {
    const { db, capabilities } = storeDatabase(within);
    const group = db.selectFrom('auth_groups').select('id').where('id', '=', groupId);
    await (capabilities.supportsRowLocks ? group.forUpdate() : group).execute();
    const members = await groupMembers(within, groupId);
    await db.deleteFrom('auth_groups').where('id', '=', groupId).execute();
    return members;
  });
}

export async function groupMembers(database: Database, groupId: number): Promise<number[]> {
  const rows = await storeDatabase(database).db.selectFrom('auth_user_groups').select('user_id').where('group_id', '=', groupId).orderBy('user_id').execute();
  return rows.map((row) => Number(row.user_id));
}

export async function groupPermissions(database: Database, groupId: number): Promise<string[]> {
  const rows = await storeDatabase(database).db.selectFrom('auth_group_permissions').select('name').where('group_id', '=', groupId).orderBy('name').execute();
  return rows.map((row) => row.name as string);
}

/** Names the group holds already stay as they are. */
export async function grantGroupPermissions(database: Database, groupId: number, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  await storeDatabase(database).db
    .insertInto('auth_group_permissions')
    .values(names.map((name) => ({ group_id: groupId, name })))
    .onConflict((conflict) => conflict.columns(['group_id', 'name']).doNothing())
    .execute();
}

/** How many of `names` the group held. */
export async function revokeGroupPermissions(database: Database, groupId: number, names: readonly string[]): Promise<number> {
  if (names.length === 0) return 0;
  const result = await storeDatabase(database).db.deleteFrom('auth_group_permissions').where('group_id', '=', groupId).where('name', 'in', names).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Puts the user in each group; one they are in already stays as it is. */
export async function joinGroups(database: Database, userId: number, groupIds: readonly number[]): Promise<void> {
  if (groupIds.length === 0) return;
  await storeDatabase(database).db
    .insertInto('auth_user_groups')
    .values(groupIds.map((groupId) => ({ group_id: groupId, user_id: userId })))
    .onConflict((conflict) => conflict.columns(['group_id', 'user_id']).doNothing())
    .execute();
}

/** How many of the groups the user was in. */
export async function leaveGroups(database: Database, userId: number, groupIds: readonly number[]): Promise<number> {
  if (groupIds.length === 0) return 0;
  const result = await storeDatabase(database).db.deleteFrom('auth_user_groups').where('user_id', '=', userId).where('group_id', 'in', groupIds).executeTakeFirst();
  return Number(result.numDeletedRows);
}
