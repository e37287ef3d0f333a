// Package docs holds the tests that keep the README and docs/ honest: the README stays
// an introduction, the documents speak of the product only, and every relative link
// and anchor resolves. It has no code.
package docs
