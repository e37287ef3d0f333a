package notify

import (
	"context"
	"net/url"
	"path"
	"strconv"
	"sync"
	"time"
)

// Test message text: what the person sees on every channel.
const (
	testTitle  = "Gatehouse test notification"
	testDetail = "Notifications reach you here. Requests that wait for you will arrive like this one."
)

// TestResult is how the test message went to one place a person's notifications go.
type TestResult struct {
	// Channel is push, ntfy, slack or webhook.
	Channel string
	// Target names the place in words ("ntfy topic alerts on ntfy.sh", "Firefox on
	// updates.push.services.mozilla.com"); never a token, a secret or a URL's path.
	Target string
	// Err is why the message was not taken ("" when it was).
	Err string
}

// Sent reports whether the receiver took the message.
func (r TestResult) Sent() bool { return r.Err == "" }

// SendTest sends one test message, now and once, to every place user's notifications
// go: each subscribed device while Web Push is on, the ntfy topic, Slack (when the
// operator set it up) and the webhook, each while turned on. It bypasses the outbox —
// the person waits for the answer, and a test is not worth retrying — and creates no
// prompt and no delivery row. No configured channel is an empty list.
func (s *Service) SendTest(ctx context.Context, user string) ([]TestResult, error) {
	now := s.o.Now()
	out, err := s.sendNow(ctx, user, "ntf_test_", func() *Message {
		return &Message{Kind: KindTest, ApproveURL: s.o.PublicURL + "/settings/notifications",
			Prompt: Summary{Title: testTitle, Detail: testDetail, Vendor: "Gatehouse", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}}
	})
	for _, r := range out {
		s.log.Info("test notification", "user", user, "channel", r.Channel, "sent", r.Sent(), "err", r.Err)
	}
	return out, err
}

// sendNow sends the message build makes, now and once, to every place user's
// notifications go (SendTest), each delivery id starting with idPrefix. It bypasses
// the outbox: no prompt, no delivery row, no retry.
func (s *Service) sendNow(ctx context.Context, user, idPrefix string, build func() *Message) ([]TestResult, error) {
	st, err := s.stored(ctx, user)
	if err != nil {
		return nil, err
	}
	type send struct {
		ch     Channel
		target Target
		name   string
	}
	var sends []send
	add := func(channel, name string, t Target) {
		if ch := s.channels[channel]; ch != nil {
			t.Email = user
			sends = append(sends, send{ch: ch, target: t, name: name})
		}
	}
	if st.PushOn() {
		subs, err := s.store.ListPushSubscriptions(ctx, user)
		if err != nil {
			return nil, err
		}
		for i := range subs {
			d := deviceOf(&subs[i])
			add(ChannelPush, d.Name+" on "+d.Host, Target{Push: &PushSubscription{ID: subs[i].ID,
				Endpoint: subs[i].Endpoint, P256dh: subs[i].P256dh, Auth: subs[i].Auth}})
		}
	}
	if st.NtfyOn() {
		add(ChannelNtfy, ntfyTopicName(st.Ntfy.URL), Target{URL: st.Ntfy.URL, Token: st.Ntfy.Token})
	}
	if st.SlackOn() {
		add(ChannelSlack, "Slack user "+user, Target{})
	}
	if st.WebhookOn() {
		add(ChannelWebhook, "webhook on "+hostOf(st.Webhook.URL), Target{URL: st.Webhook.URL, Secret: st.Webhook.Secret})
	}
	out := make([]TestResult, len(sends))
	stamp := strconv.FormatInt(s.o.Now().UnixNano(), 36)
	var wg sync.WaitGroup
	for i, sd := range sends {
		out[i] = TestResult{Channel: sd.ch.Name(), Target: sd.name}
		m := build()
		m.DeliveryID, m.Recipient, m.Target = idPrefix+stamp+"_"+strconv.Itoa(i), user, sd.target
		wg.Go(func() {
			sendCtx, cancel := context.WithTimeout(ctx, s.o.SendTimeout)
			defer cancel()
			if _, err := sd.ch.Send(sendCtx, m); err != nil {
				out[i].Err = bounded(err.Error(), 300)
			}
		})
	}
	wg.Wait()
	return out, nil
}

// ntfyTopicName names an ntfy topic URL as "ntfy topic NAME on HOST".
func ntfyTopicName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "ntfy topic"
	}
	return "ntfy topic " + path.Base(u.Path) + " on " + u.Host
}

// hostOf is a URL's host, never its path or query (which may hold a token).
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "an unreadable URL"
	}
	return u.Host
}
