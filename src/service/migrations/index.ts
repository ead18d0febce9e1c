// Maintained by `restfold makemigrations`: the migrations in this folder, in the order they run (an app passes it to defineApp({ migrations })).
import m0001_initial from './0001_initial.js';
import m0002_posts_published_default from './0002_posts_published_default.js';
import m0003_tags from './0003_tags.js';
import m0004_articles_without_tags from './0004_articles_without_tags.js';

export default { '0001_initial': m0001_initial, '0002_posts_published_default': m0002_posts_published_default, '0003_tags': m0003_tags, '0004_articles_without_tags': m0004_articles_without_tags };
