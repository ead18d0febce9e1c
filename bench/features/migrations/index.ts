// Maintained by `restfold makemigrations`: the migrations in this folder, in the order they run, for an app that imports them (defineApp({ migrations })); without it, the CLI reads this folder.
import m0001_initial from './0001_initial.js';

export default { '0001_initial': m0001_initial };
