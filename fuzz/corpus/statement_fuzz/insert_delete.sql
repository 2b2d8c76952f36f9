INSERT INTO t (a, b) BY NAME VALUES (1, E'it''s\n'), (2, $q$dollar; quoted$q$);
-- a comment; with a semicolon
DELETE FROM "Quoted ""Name""" AS x WHERE x.a = -5 /* block; comment */;
