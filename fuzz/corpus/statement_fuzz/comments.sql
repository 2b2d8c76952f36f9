SELECT /* a /* b */ c */ CASE WHEN x >=/* it's */ 5 THEN $$;$$ ELSE "q;" END FROM t VERSION AS OF 3 AS x; -- tail ;
OPTIMIZE t WHERE zorder = 1 ZORDER BY (zorder)
