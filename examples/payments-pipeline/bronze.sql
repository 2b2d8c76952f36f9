-- Bronze: every payment as it arrived, from Kafka and from a landing folder of JSON files
-- (a partner's corrections and late uploads). Records that do not parse go to
-- payments_dlq instead of stopping the pipeline.
CREATE OR REFRESH STREAMING TABLE bronze_payments
COMMENT 'payments as they arrived'
AS SELECT id, account, amount, currency, region, ts, 'kafka' AS origin
FROM STREAM read_kafka(bootstrapServers => '${kafka}', subscribe => 'payments',
                       startingOffsets => 'earliest', maxOffsetsPerTrigger => 2000, valueFormat => 'json',
                       schema => 'id BIGINT, account STRING, amount DECIMAL(12,2), currency STRING, region STRING, ts TIMESTAMP',
                       deadLetterTable => 'payments_dlq');

CREATE FLOW landed_payments AS INSERT INTO bronze_payments BY NAME
SELECT id, account, amount, currency, region, ts, 'landing' AS origin
FROM STREAM read_files('${landing}', format => 'json',
                       schema => 'id BIGINT, account STRING, amount DECIMAL(12,2), currency STRING, region STRING, ts TIMESTAMP');
