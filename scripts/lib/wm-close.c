/* Asks the X window titled argv[1] to close, the way a window manager's close button does:
 * a WM_DELETE_WINDOW client message (GTK turns it into a close request). The test displays
 * (Xvfb) run no window manager, and xdotool's `windowclose` destroys the X window instead,
 * behind the toolkit's back. Exit 0: sent; 1: no such window; 2: no display.
 * Build: cc -O1 -o wm-close scripts/lib/wm-close.c -lX11 */
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <string.h>

static Window find(Display *d, Window w, const char *title) {
    char *name = NULL;
    if (XFetchName(d, w, &name) && name) {
        int same = strcmp(name, title) == 0;
        XFree(name);
        if (same) return w;
    }
    Window root, parent, *kids = NULL, found = 0;
    unsigned int n = 0;
    if (!XQueryTree(d, w, &root, &parent, &kids, &n)) return 0;
    for (unsigned int i = 0; i < n && !found; i++) found = find(d, kids[i], title);
    if (kids) XFree(kids);
    return found;
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    Display *d = XOpenDisplay(NULL);
    if (!d) return 2;
    Window w = find(d, DefaultRootWindow(d), argv[1]);
    if (!w) return 1;
    XEvent e;
    memset(&e, 0, sizeof e);
    e.xclient.type = ClientMessage;
    e.xclient.window = w;
    e.xclient.message_type = XInternAtom(d, "WM_PROTOCOLS", False);
    e.xclient.format = 32;
    e.xclient.data.l[0] = (long)XInternAtom(d, "WM_DELETE_WINDOW", False);
    e.xclient.data.l[1] = CurrentTime;
    XSendEvent(d, w, False, NoEventMask, &e);
    XSync(d, False);
    XCloseDisplay(d);
    return 0;
}
