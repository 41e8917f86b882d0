-- fathom results store on PostgreSQL, schema 7: downsampled samples (the SQLite
-- store's 0007).
ALTER TABLE metric_points ADD COLUMN n bigint NOT NULL DEFAULT 1;
ALTER TABLE metric_points ADD COLUMN lo double precision;
ALTER TABLE metric_points ADD COLUMN hi double precision;
ALTER TABLE metric_points ADD COLUMN span_ns bigint NOT NULL DEFAULT 0;
ALTER TABLE samples ADD COLUMN n bigint NOT NULL DEFAULT 1;
