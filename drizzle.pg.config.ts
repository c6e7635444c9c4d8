import { defineConfig } from 'drizzle-kit';

/** The PostgreSQL dialect of the catalog (issue 33); drizzle.config.ts is SQLite's. */
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/storage/schema-pg.ts',
  out: './drizzle/pg',
});
