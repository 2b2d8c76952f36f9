SELECT count(*) FROM delta_scan('/tmp/t', version => 2) UNION ALL SELECT count(*) FROM delta_scan('s3://b/t', timestamp := '2024-01-01');
