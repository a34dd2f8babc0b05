-- 0005: Chinese, Japanese and Korean text in the full-text vector, as SQLite indexes it.
-- PostgreSQL's parser keeps an unsegmented CJK run as one word, so `我住在深圳` stored and
-- `深圳` searched found nothing. The backend now stores, beside a memory's text and context,
-- their segmented form (omoide.segment: characters, bigrams and, with jieba, words) when they
-- hold CJK runs, and the trigger builds the vector from it; NULL means "no CJK: use the text".
-- Rows written before this migration are re-segmented by the backend right after it runs
-- (omoide/store/postgres/segmenting.py), in the same migration transaction.
ALTER TABLE memories ADD COLUMN text_seg TEXT, ADD COLUMN context_seg TEXT;

-- omoide_fold: the same table, applied only when the text holds a character of its range
-- (U+00C0-U+0233). translate() walks the 250-letter table for every character, 0.2 ms for a
-- 60-character sentence: two calls per row were 90% of an insert's cost; a regex test is ~1 us.
CREATE OR REPLACE FUNCTION omoide_fold(t TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN t ~ '[À-ȳ]' THEN translate(t,
        'ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĨĩĪīĬĭĮįİĴĵĶķĹĺĻļĽľŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžſƠơƯưǍǎǏǐǑǒǓǔǕǖǗǘǙǚǛǜǞǟǠǡǦǧǨǩǪǫǬǭǰǴǵǸǹǺǻȀȁȂȃȄȅȆȇȈȉȊȋȌȍȎȏȐȑȒȓȔȕȖȗȘșȚțȞȟȦȧȨȩȪȫȬȭȮȯȰȱȲȳ',
        'AAAAAACEEEEIIIINOOOOOUUUUYaaaaaaceeeeiiiinooooouuuuyyAaAaAaCcCcCcCcDdEeEeEeEeEeGgGgGgGgHhIiIiIiIiIJjKkLlLlLlNnNnNnOoOoOoRrRrRrSsSsSsSsTtTtUuUuUuUuUuUuWwYyYZzZzZzsOoUuAaIiOoUuUuUuUuUuAaAaGgKkOoOojGgNnAaAaAaEeEeIiIiOoOoRrRrUuUuSsTtHhAaEeOoOoOoOoYy') ELSE t END
$$;

CREATE OR REPLACE FUNCTION memories_tsv() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- A writer that changes the text without its segmented form (a path that predates this
    -- migration) must not leave the old text's segments in the index: fall back to the text.
    IF TG_OP = 'UPDATE' THEN
        IF NEW.text IS DISTINCT FROM OLD.text AND NEW.text_seg IS NOT DISTINCT FROM OLD.text_seg
        THEN
            NEW.text_seg := NULL;
        END IF;
        IF NEW.context IS DISTINCT FROM OLD.context
            AND NEW.context_seg IS NOT DISTINCT FROM OLD.context_seg
        THEN
            NEW.context_seg := NULL;
        END IF;
    END IF;
    NEW.tsv := setweight(to_tsvector('omoide_fts', omoide_fold(coalesce(NEW.text_seg, NEW.text))), 'A')
        || setweight(to_tsvector('omoide_fts', omoide_fold(coalesce(NEW.context_seg, NEW.context))), 'B')
        || array_to_tsvector(ARRAY['t' || md5(NEW.user_id || chr(31) || NEW.scope_id)]);
    NEW.doc_len := 1 + (SELECT coalesce(sum(cardinality(u.positions)), 0) FROM unnest(NEW.tsv) u);
    RETURN NEW;
END
$$;

DROP TRIGGER memories_tsv ON memories;
CREATE TRIGGER memories_tsv BEFORE INSERT OR UPDATE OF text, context, text_seg, context_seg
    ON memories FOR EACH ROW EXECUTE FUNCTION memories_tsv();
