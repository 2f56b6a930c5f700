-- The tables of MLflow's database store (mlflow.db) that lrkit reads, as SQLAlchemy creates MLflow's models
-- (mlflow/store/tracking/dbmodels/models.py: SqlExperiment, SqlRun, SqlMetric, SqlLatestMetric, SqlParam, SqlTag)
-- on SQLite. MLflow is not in Debian: the tests write their stores with this schema (the C++ tests through SQLite's
-- C API, the Python tests through Python's sqlite3), and MLflow's conventions for values SQL cannot hold (a NaN is
-- stored as 0 with is_nan = 1, an infinity as the largest double of its sign).
CREATE TABLE experiments (
  experiment_id INTEGER NOT NULL,
  name VARCHAR(256) NOT NULL,
  artifact_location VARCHAR(256),
  lifecycle_stage VARCHAR(32),
  creation_time BIGINT,
  last_update_time BIGINT,
  CONSTRAINT experiment_pk PRIMARY KEY (experiment_id),
  UNIQUE (name),
  CONSTRAINT experiments_lifecycle_stage CHECK (lifecycle_stage IN ('active', 'deleted'))
);
CREATE TABLE runs (
  run_uuid VARCHAR(32) NOT NULL,
  name VARCHAR(250),
  source_type VARCHAR(20),
  source_name VARCHAR(500),
  entry_point_name VARCHAR(50),
  user_id VARCHAR(256),
  status VARCHAR(9),
  start_time BIGINT,
  end_time BIGINT,
  deleted_time BIGINT,
  source_version VARCHAR(50),
  lifecycle_stage VARCHAR(20),
  artifact_uri VARCHAR(200),
  experiment_id INTEGER,
  CONSTRAINT run_pk PRIMARY KEY (run_uuid),
  CONSTRAINT source_type CHECK (source_type IN ('NOTEBOOK', 'JOB', 'LOCAL', 'UNKNOWN', 'PROJECT')),
  CONSTRAINT status CHECK (status IN ('SCHEDULED', 'FAILED', 'FINISHED', 'RUNNING', 'KILLED')),
  CONSTRAINT runs_lifecycle_stage CHECK (lifecycle_stage IN ('active', 'deleted')),
  FOREIGN KEY(experiment_id) REFERENCES experiments (experiment_id)
);
CREATE TABLE metrics (
  key VARCHAR(250) NOT NULL,
  value FLOAT NOT NULL,
  timestamp BIGINT NOT NULL,
  run_uuid VARCHAR(32) NOT NULL,
  step BIGINT DEFAULT '0' NOT NULL,
  is_nan BOOLEAN DEFAULT '0' NOT NULL,
  CONSTRAINT metric_pk PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan),
  CHECK (is_nan IN (0, 1)),
  FOREIGN KEY(run_uuid) REFERENCES runs (run_uuid)
);
CREATE INDEX index_metrics_run_uuid ON metrics (run_uuid);
CREATE TABLE latest_metrics (
  key VARCHAR(250) NOT NULL,
  value FLOAT NOT NULL,
  timestamp BIGINT,
  step BIGINT NOT NULL,
  is_nan BOOLEAN NOT NULL,
  run_uuid VARCHAR(32) NOT NULL,
  CONSTRAINT latest_metric_pk PRIMARY KEY (key, run_uuid),
  CHECK (is_nan IN (0, 1)),
  FOREIGN KEY(run_uuid) REFERENCES runs (run_uuid)
);
CREATE TABLE params (
  key VARCHAR(250) NOT NULL,
  value VARCHAR(8000) NOT NULL,
  run_uuid VARCHAR(32) NOT NULL,
  CONSTRAINT param_pk PRIMARY KEY (key, run_uuid),
  FOREIGN KEY(run_uuid) REFERENCES runs (run_uuid)
);
CREATE TABLE tags (
  key VARCHAR(250) NOT NULL,
  value VARCHAR(5000),
  run_uuid VARCHAR(32) NOT NULL,
  CONSTRAINT tag_pk PRIMARY KEY (key, run_uuid),
  FOREIGN KEY(run_uuid) REFERENCES runs (run_uuid)
);
