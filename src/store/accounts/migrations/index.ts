// Maintained by `node scripts/framework-migrations.mjs`: the migrations in this folder, in the order they run, for an app that imports them (defineApp({ migrations })); without it, the CLI reads this folder.
import m0001_initial from './0001_initial.js';
import m0002_groups_and_staff from './0002_groups_and_staff.js';
import m0003_admin_log_and_user_permission_ids from './0003_admin_log_and_user_permission_ids.js';
import m0004_drop_table_user_permissions from './0004_drop_table_user_permissions.js';

export default { '0001_initial': m0001_initial, '0002_groups_and_staff': m0002_groups_and_staff, '0003_admin_log_and_user_permission_ids': m0003_admin_log_and_user_permission_ids, '0004_drop_table_user_permissions': m0004_drop_table_user_permissions };
