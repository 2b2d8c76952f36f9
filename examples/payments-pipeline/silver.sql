-- Silver: validated and de-duplicated. A payment without an id is dropped; one whose amount
-- is not positive goes to silver_payments_quarantine with the expectations it failed; an
-- unknown region is kept and counted. A payment id seen within the last hour is dropped
-- (the producer retries).
CREATE OR REFRESH STREAMING TABLE silver_payments (
  CONSTRAINT valid_id       EXPECT (id IS NOT NULL)                ON VIOLATION DROP ROW,
  CONSTRAINT positive       EXPECT (amount > 0)                    ON VIOLATION QUARANTINE,
  CONSTRAINT known_region   EXPECT (region IN ('eu', 'us', 'uk'))
)
AS SELECT DISTINCT ON (id) id, account, amount, currency, region, ts
FROM STREAM(bronze_payments) WATERMARK ts DELAY OF INTERVAL 1 HOUR;
