// Maintained by `restfold makemigrations`: the migrations in this folder, in the order they run (an app passes it to defineApp({ migrations })).
import m0001_initial from './0001_initial.js';
import m0002_conduit_user from './0002_conduit_user.js';
import m0003_tags_by_name from './0003_tags_by_name.js';

export default { '0001_initial': m0001_initial, '0002_conduit_user': m0002_conduit_user, '0003_tags_by_name': m0003_tags_by_name };
