package grants_test

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

// memStore records the grant it is given, for tests of what the service stores.
type memStore struct{ last models.RetryGrant }

func (m *memStore) InsertRetryGrant(_ context.Context, g *models.RetryGrant) (bool, error) {
	m.last = *g
	return true, nil
}

func (m *memStore) ConsumeRetryGrant(context.Context, string, string, string, time.Time) (*models.RetryGrant, error) {
	return nil, nil
}
