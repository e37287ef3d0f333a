package store

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// InsertMCPTask records a new MCP task; an id that already exists is ErrConflict.
func (s *Store) InsertMCPTask(ctx context.Context, t *models.MCPTask) error {
	err := s.w(ctx).Create(t).Error
	if isUniqueViolation(err) {
		return ErrConflict
	}
	return err
}

// GetMCPTask loads an MCP task by id (ErrNotFound when there is none). It reads the
// primary, so a task is found by the request right after the one that created or
// changed it.
func (s *Store) GetMCPTask(ctx context.Context, id string) (*models.MCPTask, error) {
	var t models.MCPTask
	if err := s.w(ctx).Where("id = ?", id).Take(&t).Error; err != nil {
		return nil, notFound(err)
	}
	return &t, nil
}

// AnswerMCPTask records that the client answered the task's input request (the first
// answer counts).
func (s *Store) AnswerMCPTask(ctx context.Context, id string, at time.Time) error {
	at = at.UTC().Truncate(time.Microsecond)
	return s.w(ctx).Model(&models.MCPTask{}).Where("id = ? AND answered_at IS NULL", id).
		Updates(map[string]any{"answered_at": at, "updated_at": at}).Error
}

// ClaimMCPTask claims the task's outcome: it reports true to exactly one caller, on
// any replica, however many race. With out set the outcome is recorded in the same
// statement (a cancel, a client's "no"); without, the caller runs the tool and then
// records what came of it (FinishMCPTask).
func (s *Store) ClaimMCPTask(ctx context.Context, id string, at time.Time, out *models.TaskOutcome) (bool, error) {
	at = at.UTC().Truncate(time.Microsecond)
	set := map[string]any{"claimed_at": at, "updated_at": at}
	if out != nil {
		set["outcome"], set["result"] = out.Outcome, nullJSON(out.Result)
	}
	res := s.w(ctx).Model(&models.MCPTask{}).Where("id = ? AND claimed_at IS NULL", id).Updates(set)
	return res.RowsAffected == 1, res.Error
}

// FinishMCPTask records the outcome of a task whose run the caller claimed.
func (s *Store) FinishMCPTask(ctx context.Context, id string, at time.Time, out models.TaskOutcome) error {
	at = at.UTC().Truncate(time.Microsecond)
	return s.w(ctx).Model(&models.MCPTask{}).Where("id = ? AND outcome IS NULL", id).
		Updates(map[string]any{"outcome": out.Outcome, "result": nullJSON(out.Result), "updated_at": at}).Error
}

// nullJSON stores no JSON as NULL.
func nullJSON(raw []byte) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}
