// Maintained by `restfold makemigrations`: the migrations in this folder, in the order they run, for an app that imports them (defineApp({ migrations })); without it, the CLI reads this folder.
import m0001_initial from './0001_initial.js';
import m0002_product_image from './0002_product_image.js';

export default { '0001_initial': m0001_initial, '0002_product_image': m0002_product_image };
