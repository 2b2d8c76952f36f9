SELECT _commit_version, _change_type, id FROM table_changes('sales.orders', 1, 5) WHERE id IN (SELECT id FROM table_changes('feed', 0));
