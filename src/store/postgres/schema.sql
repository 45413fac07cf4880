-- schema.sql - fidx's tables on PostgreSQL, in the schema fidx of a database
-- (docs/SCHEMA.md, "PostgreSQL").
--
-- One script, run two ways: by the first scan written into a database (the
-- PostgreSQL backend embeds it at build time), or by scripts/fidx-pg-setup,
-- which makes the schema as its owner before any host writes.  The columns
-- of scan and file are those of the SQLite tables, by the same names and in
-- the same order (an integer is a bigint, a text or blob a bytea, so every
-- byte of a name comes back); t_pgsecurity.py compares them.
--
-- Who may do what, when the roles fidx_ingest and fidx_analyst exist (the
-- set-up script makes them; without them the schema's owner alone uses it):
--
--   fidx_ingest    members write scans of their own hosts only (fidx.host_role
--                  maps a role to the host names it may write) and read nothing
--                  of the others: row-level security on every table with rows
--                  of a host
--   fidx_analyst   members read everything and write nothing
--
-- The owner is not subject to the policies (it made the tables).

CREATE SCHEMA fidx;

CREATE TABLE fidx.meta (key text PRIMARY KEY, value text NOT NULL);

CREATE TABLE fidx.host (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name bytea NOT NULL UNIQUE
);

-- The hosts an ingest role writes (kept by the owner: fidx-pg-setup ingest).
CREATE TABLE fidx.host_role (
	role name NOT NULL,
	host bytea NOT NULL,
	PRIMARY KEY (role, host)
);

CREATE TABLE fidx.scan (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	root bytea NOT NULL,
	host bytea,
	os bytea,
	kernel bytea,
	arch bytea,
	version bytea,
	options bytea,
	started_ns bigint,
	finished_ns bigint,
	status bytea,
	entries bigint,
	files bigint,
	dirs bigint,
	bytes bigint,
	errors bigint,
	reused bigint,
	hashed bigint,
	base_scan_id bigint,
	pid bigint,
	seal bytea,
	run_ns bigint,
	uuid uuid UNIQUE,
	host_id bigint NOT NULL REFERENCES fidx.host,
	origin_id bigint
);

-- File ids in blocks: a writer takes one before each batch (write.c, PG_ID_BLOCK).
CREATE SEQUENCE fidx.file_id INCREMENT BY 1048576;

CREATE TABLE fidx.file (
	id bigint NOT NULL,
	scan_id bigint NOT NULL,
	path bytea NOT NULL,
	name bytea,
	ext bytea,
	type bytea,
	size bigint,
	blocks bigint,
	mode bigint,
	uid bigint,
	gid bigint,
	nlink bigint,
	dev bigint,
	ino bigint,
	atime_ns bigint,
	mtime_ns bigint,
	ctime_ns bigint,
	btime_ns bigint,
	link_target bytea,
	md5 bytea,
	sha1 bytea,
	sha256 bytea,
	sha512 bytea,
	xxh128 bytea,
	error bytea,
	digests_from bigint,
	atime_sec bigint,
	atime_nsec bigint,
	mtime_sec bigint,
	mtime_nsec bigint,
	ctime_sec bigint,
	ctime_nsec bigint,
	btime_sec bigint,
	btime_nsec bigint,
	state bytea,
	stream bytea,
	fn_atime_ns bigint,
	fn_mtime_ns bigint,
	fn_ctime_ns bigint,
	fn_btime_ns bigint,
	fn_atime_sec bigint,
	fn_atime_nsec bigint,
	fn_mtime_sec bigint,
	fn_mtime_nsec bigint,
	fn_ctime_sec bigint,
	fn_ctime_nsec bigint,
	fn_btime_sec bigint,
	fn_btime_nsec bigint,
	attributes bigint,
	host_id bigint NOT NULL,
	origin_id bigint,
	-- A scan's rows in id order (its seal's order) without a sort; ids are unique
	-- (the sequence), the pair is the key.
	PRIMARY KEY (scan_id, id)
);

-- Made with the table, not after a load: a fleet's table is never empty, and an ingest
-- role (not its owner) could not make them.  find reads a scan's paths in order; a hunt
-- looks digests up (the three of the hash sets people have: NSRL, VirusTotal, ...).
CREATE INDEX file_scan_path ON fidx.file (scan_id, path);
CREATE INDEX file_md5 ON fidx.file (md5) WHERE md5 IS NOT NULL;
CREATE INDEX file_sha1 ON fidx.file (sha1) WHERE sha1 IS NOT NULL;
CREATE INDEX file_sha256 ON fidx.file (sha256) WHERE sha256 IS NOT NULL;

CREATE TABLE fidx.file_digest (
	file_id bigint PRIMARY KEY,
	read_ns bigint,
	edge_block bigint,
	edges bytea,
	sha256 bytea,
	host_id bigint NOT NULL
);

-- The row hashes of the seal, one row per scan per batch written (seal.c).
CREATE TABLE fidx.seal_batch (
	scan_id bigint NOT NULL,
	ids bytea NOT NULL,
	hashes bytea NOT NULL,
	host_id bigint NOT NULL
);
CREATE INDEX seal_batch_scan ON fidx.seal_batch (scan_id);

-- A scan kept as its changes from an earlier scan of its host and root (schema 8,
-- write.c, delta.c): its own rows are in fidx.file, the rest are base_id's rows that
-- runs (core/delta.h) lend it under new ids; depth counts the scans kept so down to
-- one kept whole.
CREATE TABLE fidx.scan_delta (
	scan_id bigint PRIMARY KEY,
	base_id bigint NOT NULL,
	depth integer NOT NULL,
	runs bytea NOT NULL,
	host_id bigint NOT NULL
);
CREATE INDEX scan_delta_base ON fidx.scan_delta (base_id);

-- The substring index of find (core/pathindex.h: blocks of sorted paths, and
-- for each trigram the blocks that hold it), built when a scan ends or is
-- pushed; its path_index row, written last, says it is whole.
CREATE TABLE fidx.path_index (
	scan_id bigint PRIMARY KEY,
	paths bigint NOT NULL,
	blocks bigint NOT NULL,
	trigrams bigint NOT NULL,
	built_ns bigint NOT NULL,
	host_id bigint NOT NULL
);
CREATE TABLE fidx.path_block (
	scan_id bigint NOT NULL,
	block integer NOT NULL,
	data bytea NOT NULL,
	host_id bigint NOT NULL,
	PRIMARY KEY (scan_id, block)
);
CREATE TABLE fidx.path_trigram (
	scan_id bigint NOT NULL,
	tri integer NOT NULL,
	blocks bytea NOT NULL,
	host_id bigint NOT NULL,
	PRIMARY KEY (scan_id, tri)
);

-- The hosts the role that logged in writes, for the policies (the function reads
-- host_role as its owner, so current_user inside it is the owner: session_user is
-- the ingest role).
CREATE FUNCTION fidx.my_hosts() RETURNS SETOF bigint
	LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
	AS $$ SELECT h.id FROM fidx.host h JOIN fidx.host_role r ON r.host = h.name
	      WHERE r.role = session_user $$;
REVOKE ALL ON FUNCTION fidx.my_hosts() FROM PUBLIC;

-- Whether scan is a scan of host, for scan_delta's policy: the scan and its base of the
-- row's host (read as the role that writes, under its policies; a function, so that a
-- policy that calls it names no other table: fidx-pg-shard copies policies as text).
CREATE FUNCTION fidx.scan_of(scan bigint, host bigint) RETURNS boolean
	LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
	AS $$ SELECT EXISTS (SELECT 1 FROM fidx.scan s WHERE s.id = $1 AND s.host_id = $2) $$;
REVOKE ALL ON FUNCTION fidx.scan_of(bigint, bigint) FROM PUBLIC;

ALTER TABLE fidx.host ENABLE ROW LEVEL SECURITY;
ALTER TABLE fidx.host_role ENABLE ROW LEVEL SECURITY;
ALTER TABLE fidx.scan ENABLE ROW LEVEL SECURITY;
ALTER TABLE fidx.file ENABLE ROW LEVEL SECURITY;
ALTER TABLE fidx.file_digest ENABLE ROW LEVEL SECURITY;
ALTER TABLE fidx.seal_batch ENABLE ROW LEVEL SECURITY;
ALTER TABLE fidx.path_index ENABLE ROW LEVEL SECURITY;
ALTER TABLE fidx.path_block ENABLE ROW LEVEL SECURITY;
ALTER TABLE fidx.path_trigram ENABLE ROW LEVEL SECURITY;
ALTER TABLE fidx.scan_delta ENABLE ROW LEVEL SECURITY;

DO $$
BEGIN
	IF EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'fidx_analyst') THEN
		GRANT USAGE ON SCHEMA fidx TO fidx_analyst;
		GRANT SELECT ON ALL TABLES IN SCHEMA fidx TO fidx_analyst;
		CREATE POLICY analyst_reads ON fidx.host FOR SELECT TO fidx_analyst USING (true);
		CREATE POLICY analyst_reads ON fidx.host_role FOR SELECT TO fidx_analyst USING (true);
		CREATE POLICY analyst_reads ON fidx.scan FOR SELECT TO fidx_analyst USING (true);
		CREATE POLICY analyst_reads ON fidx.file FOR SELECT TO fidx_analyst USING (true);
		CREATE POLICY analyst_reads ON fidx.file_digest FOR SELECT TO fidx_analyst
			USING (true);
		CREATE POLICY analyst_reads ON fidx.seal_batch FOR SELECT TO fidx_analyst
			USING (true);
		CREATE POLICY analyst_reads ON fidx.path_index FOR SELECT TO fidx_analyst
			USING (true);
		CREATE POLICY analyst_reads ON fidx.path_block FOR SELECT TO fidx_analyst
			USING (true);
		CREATE POLICY analyst_reads ON fidx.path_trigram FOR SELECT TO fidx_analyst
			USING (true);
		CREATE POLICY analyst_reads ON fidx.scan_delta FOR SELECT TO fidx_analyst
			USING (true);
	END IF;
	IF EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'fidx_ingest') THEN
		GRANT USAGE ON SCHEMA fidx TO fidx_ingest;
		GRANT SELECT ON fidx.meta TO fidx_ingest;
		GRANT SELECT ON fidx.host_role TO fidx_ingest;
		GRANT SELECT, INSERT, UPDATE ON fidx.host, fidx.scan TO fidx_ingest;
		GRANT SELECT, INSERT, UPDATE, DELETE ON fidx.file, fidx.file_digest,
			fidx.seal_batch, fidx.path_index, fidx.path_block, fidx.path_trigram,
			fidx.scan_delta TO fidx_ingest;
		GRANT USAGE ON SEQUENCE fidx.file_id TO fidx_ingest;
		GRANT EXECUTE ON FUNCTION fidx.my_hosts() TO fidx_ingest;
		GRANT EXECUTE ON FUNCTION fidx.scan_of(bigint, bigint) TO fidx_ingest;
		CREATE POLICY ingest_own ON fidx.host_role TO fidx_ingest
			USING (role = current_user);
		CREATE POLICY ingest_own ON fidx.host TO fidx_ingest
			USING (name IN (SELECT host FROM fidx.host_role WHERE role = current_user))
			WITH CHECK (name IN (SELECT host FROM fidx.host_role
					     WHERE role = current_user));
		CREATE POLICY ingest_own ON fidx.scan TO fidx_ingest
			USING (host_id IN (SELECT fidx.my_hosts()))
			WITH CHECK (host_id IN (SELECT fidx.my_hosts()));
		CREATE POLICY ingest_own ON fidx.file TO fidx_ingest
			USING (host_id IN (SELECT fidx.my_hosts()))
			WITH CHECK (host_id IN (SELECT fidx.my_hosts()));
		CREATE POLICY ingest_own ON fidx.file_digest TO fidx_ingest
			USING (host_id IN (SELECT fidx.my_hosts()))
			WITH CHECK (host_id IN (SELECT fidx.my_hosts()));
		CREATE POLICY ingest_own ON fidx.seal_batch TO fidx_ingest
			USING (host_id IN (SELECT fidx.my_hosts()))
			WITH CHECK (host_id IN (SELECT fidx.my_hosts()));
		CREATE POLICY ingest_own ON fidx.path_index TO fidx_ingest
			USING (host_id IN (SELECT fidx.my_hosts()))
			WITH CHECK (host_id IN (SELECT fidx.my_hosts()));
		CREATE POLICY ingest_own ON fidx.path_block TO fidx_ingest
			USING (host_id IN (SELECT fidx.my_hosts()))
			WITH CHECK (host_id IN (SELECT fidx.my_hosts()));
		CREATE POLICY ingest_own ON fidx.path_trigram TO fidx_ingest
			USING (host_id IN (SELECT fidx.my_hosts()))
			WITH CHECK (host_id IN (SELECT fidx.my_hosts()));
		-- The scan and its base both of the row's host: host_id alone is the writer's.
		CREATE POLICY ingest_own ON fidx.scan_delta TO fidx_ingest
			USING (host_id IN (SELECT fidx.my_hosts()))
			WITH CHECK (host_id IN (SELECT fidx.my_hosts())
				    AND fidx.scan_of(scan_id, host_id) AND fidx.scan_of(base_id, host_id));
	END IF;
END
$$;

INSERT INTO fidx.meta VALUES ('version', '8');
