package errorssvc

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

// table is where endpoint 3 stores its texts: both are created at start-up
// if missing; the variant of the endpoint in use writes and prunes its own.
type table struct {
	name, schema string
}

// records is the table of endpoint 3 as planted.
//
// DEFECT(ERR-02): the contract promises text up to 255 characters, but the
// column is declared 16 wide and its check admits at most 15 characters.
var records = table{"records", `CREATE TABLE IF NOT EXISTS records (
	id   INTEGER PRIMARY KEY,
	text VARCHAR(16) CHECK (length(text) < 16)
)`}

// texts holds what the contract promises, text of up to 255 characters: the
// table of endpoint 3 when its defect is switched off.
var texts = table{"texts", `CREATE TABLE IF NOT EXISTS texts (
	id   INTEGER PRIMARY KEY,
	text TEXT NOT NULL CHECK (length(text) <= 255)
)`}

// recordStore keeps the texts of endpoint 3 in SQLite, at most maxRows of
// them a table: each insert prunes the oldest beyond the cap in the same
// transaction, so a fuzzer running for days cannot exhaust memory or disk.
type recordStore struct {
	db      *sql.DB
	maxRows int64
}

// openStore opens the database at path, or an in-memory one when path is
// empty, and creates both tables.
func openStore(path string, maxRows int) (*recordStore, error) {
	dsn := ":memory:"
	if path != "" {
		// Created private: the table holds whatever clients sent. SQLite
		// gives its WAL and shared-memory files the same mode.
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open sqlite %q: %w", path, err)
		}
		_ = f.Close()
		q := url.Values{"_pragma": {"busy_timeout(5000)", "journal_mode(WAL)", "synchronous(NORMAL)"}}
		dsn = path + "?" + q.Encode()
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %q: %w", path, err)
	}
	// One connection: an in-memory database lives and dies with its
	// connection, and a single writer never meets SQLITE_BUSY.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	// Temporary tables and indices stay in memory: the container's root
	// file system is read-only.
	if _, err := db.Exec(`PRAGMA temp_store = MEMORY`); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlite %q: %w", path, err)
	}
	for _, t := range []table{records, texts} {
		if _, err := db.Exec(t.schema); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("create schema in %q: %w", path, err)
		}
	}
	return &recordStore{db: db, maxRows: int64(maxRows)}, nil
}

// insert stores value in t (text, number or NULL) and prunes the oldest rows
// beyond the cap. A failed insert is rolled back and returns SQLite's error.
func (s *recordStore) insert(ctx context.Context, t table, value any) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO `+t.name+` (text) VALUES (?)`, value)
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	id, err := res.LastInsertId()
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	if id > s.maxRows {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t.name+` WHERE id <= ?`, id-s.maxRows); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// count returns the number of rows t holds.
func (s *recordStore) count(ctx context.Context, t table) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM `+t.name).Scan(&n)
	return n, err
}

func (s *recordStore) close() error { return s.db.Close() }
