INSERT INTO silver SELECT * FROM STREAM read_kafka('orders', servers => 'h:9092') WATERMARK ts DELAY OF INTERVAL 10 SECONDS AS k JOIN STREAM(dims) d ON k.id = d.id
