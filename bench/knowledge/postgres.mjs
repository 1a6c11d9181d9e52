// A fresh PostgreSQL database for the informational PostgreSQL rows, dropped afterwards; null
// when no server answers at `adminUrl`.
import pg from 'pg';

export async function postgresDatabase(adminUrl) {
  const admin = new pg.Client({ connectionString: adminUrl });
  try {
    await admin.connect();
  } catch {
    return null;
  }
  const name = `sy_bench_${Date.now().toString(36)}`;
  const version = (await admin.query('show server_version')).rows[0].server_version;
  await admin.query(`create database ${name} template template0 encoding 'UTF8'`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    version,
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}
