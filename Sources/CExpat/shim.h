/* libexpat (Debian's libexpat1-dev): the XML parser under GPX and KML. */
#include <expat.h>
