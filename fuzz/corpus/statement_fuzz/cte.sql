WITH recent AS (SELECT * FROM orders WHERE placed > now() - INTERVAL 1 DAY) SELECT r.id::VARCHAR, [1, 2][1], {'k': 1.5e3} FROM recent r;
