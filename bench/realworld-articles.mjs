/**
 * Seeds `count` articles of the RealWorld example straight into its SQLite file, written by user 2,
 * each tagged `tag-<i % 100>`, `topic-<i % 7>` and `common`, in one transaction (through the API it
 * would take minutes, and the throttle). Shared by bench/sqlite-bystander.mjs and its test.
 */
import SQLite from 'better-sqlite3';

export function seedArticles(file, count) {
  const database = new SQLite(file);
  const insert = database.prepare('INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at) VALUES (?, ?, ?, ?, 2, ?, ?)');
  const tag = database.prepare('INSERT INTO tags (name) VALUES (?)');
  const link = database.prepare('INSERT INTO articles_tags (article_id, tag_id) VALUES (?, ?)');
  database.transaction(() => {
    const names = [...Array.from({ length: 100 }, (_, i) => `tag-${i}`), ...Array.from({ length: 7 }, (_, i) => `topic-${i}`), 'common'];
    const tagIds = new Map(names.map((name) => [name, Number(tag.run(name).lastInsertRowid)]));
    for (let i = 0; i < count; i++) {
      const at = new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString();
      const article = Number(insert.run(`article-${i}`, `Article ${i}`, 'About a thing', `Body of article ${i}`, at, at).lastInsertRowid);
      for (const name of [`tag-${i % 100}`, `topic-${i % 7}`, 'common']) link.run(article, tagIds.get(name));
    }
  })();
  database.close();
}
