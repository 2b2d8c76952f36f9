-- The customers dimension, kept by AUTO CDC as SCD type 2 from the CRM's change feed: every
-- version of a customer, with __START_AT and __END_AT; changes that arrive out of order are
-- placed by their sequence number.
CREATE OR REFRESH STREAMING TABLE customers;

CREATE FLOW customers_cdc AS AUTO CDC INTO customers
FROM STREAM(crm_changes)
KEYS (account)
APPLY AS DELETE WHEN op = 'DELETE'
SEQUENCE BY seq
COLUMNS * EXCEPT (op, seq)
STORED AS SCD TYPE 2;
