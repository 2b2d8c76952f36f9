-- Gold: what the dashboards read. Both are refreshed incrementally while silver only grows.
CREATE OR REFRESH MATERIALIZED VIEW gold_daily_by_region AS
SELECT region, currency, date_trunc('day', ts) AS day, count(*) AS payments, sum(amount) AS amount,
       round(avg(amount), 2) AS average
FROM silver_payments GROUP BY ALL;

CREATE OR REFRESH MATERIALIZED VIEW gold_by_segment AS
SELECT c.segment, count(*) AS payments, sum(p.amount) AS amount
FROM silver_payments p JOIN customers c ON p.account = c.account
WHERE c.__END_AT IS NULL
GROUP BY c.segment;
