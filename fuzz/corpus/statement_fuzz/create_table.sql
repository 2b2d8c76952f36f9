CREATE TABLE IF NOT EXISTS sales.orders (id BIGINT NOT NULL, amount DECIMAL(10, 2), placed TIMESTAMP) PARTITIONED BY (placed) TBLPROPERTIES ('delta.enableDeletionVectors' = 'true');
